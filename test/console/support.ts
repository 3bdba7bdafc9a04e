import { mkdirSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Browser, BrowserContextOptions, Page } from 'playwright-core'
import { expect, inject } from 'vitest'
import { withChromium } from '../support/chromium.js'
import type { DialectName } from '../support/dialects.js'
import { type CreatedAccount, type TestHerald, forEachDialect, useHerald } from '../support/herald.js'
import { basicAuth, call, managementToken } from '../support/http.js'
import { eventually } from '../support/receiver.js'
import { LOCAL_DELIVERY } from '../webhooks/support.js'

/** The console delivers to receivers on 127.0.0.1 over plain http, as the webhook tests do. */
export const CONSOLE_HERALD = LOCAL_DELIVERY

/**
 * Runs `suite` on each dialect under test, with the dialect's Herald (delivering to 127.0.0.1) and the file's one
 * Chromium; without Chromium, where none is required, `title` is a single skipped test that says how to get it.
 */
export function forEachConsole(title: string, suite: (dialect: DialectName, h: { readonly current: TestHerald }, browser: { readonly current: Browser }) => void): void {
  withChromium(title, (browser) => forEachDialect((dialect) => suite(dialect, useHerald(dialect, CONSOLE_HERALD), browser)))
}

/**
 * A page in a browser context of its own (with `options`, such as a viewport): no cookie or storage of another test's
 * pages; close it with its context.
 */
export async function newPage(browser: { readonly current: Browser }, options: BrowserContextOptions = {}): Promise<Page> {
  const context = await browser.current.newContext(options)
  return context.newPage()
}

/** A window the console is looked at in: its size and colour scheme. */
export interface View {
  width: number
  height: number
  dark: boolean
}

/**
 * Screenshots go to docs/console/ (which the docs show) with HERALD_CONSOLE_SCREENSHOTS=1, else to a scratch folder:
 * ids and times differ on every run, and a test run should leave the work tree as it found it.
 */
const SCREENSHOTS = process.env.HERALD_CONSOLE_SCREENSHOTS === '1' ? fileURLToPath(new URL('../../docs/console/', import.meta.url)) : join(tmpdir(), 'herald-console-screenshots')

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8')

/** axe-core's serious and critical findings on the page as it is now, each as `rule: help (where)`. */
async function accessibilityViolations(page: Page): Promise<string[]> {
  // Evaluated through the DevTools protocol, which the page's CSP does not govern: the console itself stays strict.
  await page.evaluate(AXE)
  const found = await page.evaluate<Array<{ id: string; impact: string | null; help: string; targets: string[] }>>(
    'axe.run(document, { resultTypes: ["violations"] }).then((result) => result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, targets: v.nodes.map((n) => n.target.join(" ")) })))',
  )
  return found.filter((violation) => violation.impact === 'serious' || violation.impact === 'critical').map((violation) => `${violation.id}: ${violation.help} (${violation.targets.join(', ')})`)
}

/**
 * Checks the page as a person would meet it: no serious or critical axe-core finding, on every dialect; and saves a
 * full-page screenshot of it once per run, on the first dialect under test: NAME.png, or NAME-WIDTH[-dark].png when
 * the page is looked at in a given `view` (so `endpoints-390-dark.png`).
 */
export async function lookAt(page: Page, dialect: string, name: string, view?: View): Promise<void> {
  const file = view ? `${name}-${view.width}${view.dark ? '-dark' : ''}` : name
  expect(await accessibilityViolations(page), `accessibility of ${file}`).toEqual([])
  if (dialect !== inject('dialects')[0]) return
  mkdirSync(SCREENSHOTS, { recursive: true })
  await page.screenshot({ path: join(SCREENSHOTS, `${file}.png`), fullPage: true })
}

/** Signs in on the console's sign-in form (at whatever console URL the page is on) and waits for the signed-in page. */
export async function signIn(page: Page, account: { id: string }, clientId: string, secret: string): Promise<void> {
  await page.getByLabel('Account id').fill(account.id)
  await page.getByLabel('Client id').fill(clientId)
  await page.getByLabel('Client secret').fill(secret)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.getByRole('button', { name: 'Sign out' }).waitFor()
}

/** Opens `path` under /console/ and signs in with the account's first management client. */
export async function openSignedIn(page: Page, h: TestHerald, account: CreatedAccount, path = ''): Promise<void> {
  await page.goto(`${h.origin}/console/${path}`)
  await signIn(page, account, account.clientId, account.clientSecret)
}

/** Clicks Refresh until `check` holds: the worker delivers in the background, and the page shows what it read. */
export async function refreshUntil(page: Page, check: () => Promise<boolean>, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`the console never showed ${what}`)
    await page.getByRole('button', { name: 'Refresh' }).click()
    await page.waitForLoadState('networkidle')
  }
}

/** A management client of the account limited to `scope`, made through the API; answers its id and secret. */
export async function managementClient(account: CreatedAccount, scope: string): Promise<{ clientId: string; secret: string }> {
  const token = await managementToken(account)
  const created = await call<{ client_id: string; client_secret: string }>(`${account.base}/oauth/clients`, 'POST', {
    token,
    json: { client_name: `console ${scope}`, grant_types: ['client_credentials'], scope },
  })
  expect(created.status, created.text).toBe(201)
  return { clientId: created.body.client_id, secret: created.body.client_secret }
}

/** The `expires_in` of a token the account's first management client gets now. */
export async function tokenLifetime(account: CreatedAccount): Promise<number> {
  const response = await call<{ expires_in: number }>(`${account.base}/oauth/tokens`, 'POST', {
    headers: { authorization: basicAuth(account.clientId, account.clientSecret) },
    form: { grant_type: 'client_credentials' },
  })
  expect(response.status, response.text).toBe(200)
  return response.body.expires_in
}

/**
 * Changes the account's settings through the API, and returns once they are in effect: Herald's settings cache hears
 * of a change by notification, a moment later. Tokens show when: the patch also sets a lifetime they did not have.
 */
export async function patchSettings(account: CreatedAccount, settings: Record<string, unknown>): Promise<void> {
  const lifetime = typeof settings.access_token_ttl === 'number' ? settings.access_token_ttl : (await tokenLifetime(account)) === 3600 ? 3599 : 3600
  const response = await call(`${account.base}/settings`, 'PATCH', { token: await managementToken(account), json: { ...settings, access_token_ttl: lifetime } })
  expect(response.status, response.text).toBe(200)
  await eventually(async () => (await tokenLifetime(account)) === lifetime, 10_000, 'the new settings in effect')
}
