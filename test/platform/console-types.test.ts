import { readFile } from 'node:fs/promises'
import { describe, expect, it } from 'vitest'
import { openHerald } from '../../src/herald.js'
import { loadConfig } from '../../src/platform/config.js'
import { createLogger } from '../../src/platform/logger.js'
import { buildServer } from '../../src/server.js'
import { CONSOLE_API_TYPES, fetchOpenApiDocument, renderConsoleApiTypes } from '../../scripts/console-types.mjs'

describe("the console's API types", () => {
  it('are generated from the OpenAPI document the route schemas make, as committed', async () => {
    const document = await fetchOpenApiDocument({ openHerald, buildServer, loadConfig, createLogger })
    const generated = await renderConsoleApiTypes(document)
    const committed = await readFile(CONSOLE_API_TYPES, 'utf8')
    expect(committed, 'console/src/api-types.ts is out of date: run `npm run console:types` and commit it').toBe(generated)
  })
})
