import type { openHerald } from '../src/herald.js'
import type { loadConfig } from '../src/platform/config.js'
import type { createLogger } from '../src/platform/logger.js'
import type { buildServer } from '../src/server.js'

/** Where the generated types are written. */
export const CONSOLE_API_TYPES: string

/** Herald's modules the document is made with: from src/ in tests, from dist/ in the script. */
export interface HeraldModules {
  openHerald: typeof openHerald
  buildServer: typeof buildServer
  loadConfig: typeof loadConfig
  createLogger: typeof createLogger
}

export function fetchOpenApiDocument(herald: HeraldModules): Promise<unknown>
export function renderConsoleApiTypes(document: unknown): Promise<string>
