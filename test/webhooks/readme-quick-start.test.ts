import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { freePort } from '../support/herald.js'
import { type HeraldProcess, MAIN, ready, spawnHerald, stop } from '../support/herald-process.js'
import { ShellSession } from '../support/shell.js'

const README = readFileSync(fileURLToPath(new URL('../../README.md', import.meta.url)), 'utf8')

/** The `sh` blocks of the README's `## heading` section, up to the next `## ` heading or `until`. */
function shellBlocks(heading: string, until = '\n## '): string[] {
  const start = README.indexOf(`\n## ${heading}\n`)
  expect(start, heading).toBeGreaterThan(-1)
  const rest = README.slice(start + heading.length + 5)
  const end = rest.indexOf(until)
  return [...rest.slice(0, end === -1 ? undefined : end).matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => (match[1] ?? '').trim())
}

/**
 * The README's quick start and webhook walk-through, run as a newcomer runs them: in a fresh folder, on the
 * development setup `npm start` gives (SQLite under ./data, no settings at all), each block pasted into one terminal
 * in turn, waiting between blocks for what the README says to wait for.
 */
describe.runIf(inject('dialects').includes('sqlite'))('the README, as written', () => {
  let folder = ''
  let server: HeraldProcess | undefined
  let shell: ShellSession | undefined

  beforeAll(() => {
    folder = mkdtempSync(path.join(tmpdir(), 'herald-readme-'))
  })
  afterAll(async () => {
    shell?.close()
    await stop(server)
    if (folder !== '') rmSync(folder, { recursive: true, force: true })
  })

  it("delivers the webhook section's event to herald listen, verified, and lists it succeeded", async () => {
    const [start, ...quickStart] = shellBlocks('Quick start')
    expect(start).toBe('npm install && npm start')
    // The checkout is built already; its server starts in the new folder, on a port of its own rather than 8080, and
    // the CLI, told nothing, must follow it.
    const port = await freePort()
    server = spawnHerald('serve', { PORT: String(port) }, folder)
    await ready(server, `http://127.0.0.1:${port}`)

    // `npx herald`, as in a checkout of Herald, is the built CLI of this one.
    const shim = path.join(folder, '.bin')
    mkdirSync(shim)
    writeFileSync(path.join(shim, 'npx'), `#!/bin/sh\n[ "$1" = herald ] || { echo "npx: only herald here" >&2; exit 127; }\nshift\nexec "${process.execPath}" "${MAIN}" "$@"\n`)
    chmodSync(path.join(shim, 'npx'), 0o755)
    shell = new ShellSession(folder, { PATH: `${shim}:${process.env.PATH ?? ''}`, HOME: folder })

    for (const block of quickStart.filter((block) => block !== 'npm test')) await shell.run(block)
    const created = JSON.parse(readFileSync(path.join(folder, 'acme.json'), 'utf8')) as { account: { issuer: string } }
    expect(created.account.issuer).toMatch(new RegExp(`^http://localhost:${port}/accounts/acct_`))

    const blocks = shellBlocks('Webhooks', '### What a delivery looks like')
    expect(blocks).toHaveLength(3)
    const [listen = '', publish = '', deliveries = ''] = blocks
    await shell.run(listen)
    await shell.waitFor('Listening on http://127.0.0.1:9000/')
    await shell.run(publish)
    await shell.waitFor('verified  evt_')
    expect(shell.output).toMatch(/verified {2}evt_\w+ {2}invoice\.paid {2}\{"invoice":42\}/)
    expect(shell.output).not.toMatch(/rejected/)

    expect(JSON.parse(await shell.run(deliveries))).toEqual({ event_type: 'invoice.paid', status: 'succeeded', attempt_count: 1, last_response_status: 204 })
  }, 120_000)
})
