import { type ChildProcess, spawn } from 'node:child_process'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import type { Page } from 'playwright-core'
import { expect } from 'vitest'
import { type CreatedAccount, type TestHerald, freePort } from './herald.js'

// examples/login-consent, run as its README says, for the browser tests: the account's login, consent, logout and
// device app, and the demo relying party.

const EXAMPLE = fileURLToPath(new URL('../../examples/login-consent/server.mjs', import.meta.url))

export interface ExampleApp {
  url: string
  /** What the app printed, line by line. */
  lines: string[]
  /** The first line, printed already or to come, that `matches`. */
  line(matches: RegExp): Promise<string>
  stop(): Promise<void>
}

/**
 * `node examples/login-consent/server.mjs` for the account; answers once it says it is ready. Herald's own `PORT`
 * is in its environment, as in a shell that started Herald: the app must keep to `EXAMPLE_PORT`.
 */
export async function startExample(herald: TestHerald, account: CreatedAccount): Promise<ExampleApp> {
  const port = await freePort()
  const child: ChildProcess = spawn(process.execPath, [EXAMPLE], {
    env: {
      PATH: process.env.PATH ?? '',
      HERALD_ISSUER: account.issuer,
      HERALD_CLIENT_ID: account.clientId,
      HERALD_CLIENT_SECRET: account.clientSecret,
      PORT: new URL(herald.origin).port,
      EXAMPLE_PORT: String(port),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const lines: string[] = []
  const waiting: Array<{ matches: RegExp; resolve: (line: string) => void }> = []
  let errors = ''
  child.stderr?.on('data', (chunk: Buffer) => (errors += chunk.toString('utf8')))
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  await new Promise<void>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      lines.push(line)
      for (const waiter of waiting.filter(({ matches }) => matches.test(line))) {
        waiting.splice(waiting.indexOf(waiter), 1)
        waiter.resolve(line)
      }
      if (line.includes('example ready')) resolve()
    })
    void exited.then(() => reject(new Error(`the example exited before it was ready (code ${child.exitCode}):\n${lines.join('\n')}\n${errors}`)))
  })
  expect(errors, 'what the example printed on stderr').toBe('')
  return {
    url: `http://127.0.0.1:${port}`,
    lines,
    line(matches) {
      const printed = lines.find((line) => matches.test(line))
      return printed === undefined ? new Promise((resolve) => waiting.push({ matches, resolve })) : Promise.resolve(printed)
    },
    async stop() {
      child.kill('SIGTERM')
      await exited
    },
  }
}

/** The app's `pages` the browser was answered, as `METHOD /path STATUS`, in order; redirects included. */
export function recordPages(page: Page, app: ExampleApp, pages: readonly string[]): string[] {
  const seen: string[] = []
  page.on('response', (response) => {
    const url = new URL(response.url())
    if (url.origin === app.url && pages.includes(url.pathname)) seen.push(`${response.request().method()} ${url.pathname} ${response.status()}`)
  })
  return seen
}
