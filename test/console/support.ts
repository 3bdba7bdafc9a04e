import { mkdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Page } from 'playwright-core'
import { expect, inject } from 'vitest'
import type { CreatedAccount, TestHerald } from '../support/herald.js'
import { call, managementToken } from '../support/http.js'
import { LOCAL_DELIVERY } from '../webhooks/support.js'

/** The console delivers to receivers on 127.0.0.1 over plain http, as the webhook tests do. */
export const CONSOLE_HERALD = LOCAL_DELIVERY

/**
 * Screenshots go to docs/console/ (which the docs show) with HERALD_CONSOLE_SCREENSHOTS=1, else to a scratch folder:
 * ids and times differ on every run, and a test run should leave the work tree as it found it.
 */
const SCREENSHOTS = process.env.HERALD_CONSOLE_SCREENSHOTS === '1' ? fileURLToPath(new URL('../../docs/console/', import.meta.url)) : join(tmpdir(), 'herald-console-screenshots')

/** Saves a full-page screenshot of `page` as NAME.png, once per run: on the first dialect under test. */
export async function screenshot(page: Page, dialect: string, name: string): Promise<void> {
  if (dialect !== inject('dialects')[0]) return
  mkdirSync(SCREENSHOTS, { recursive: true })
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true })
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

/** Changes the account's settings through the API. */
export async function patchSettings(account: CreatedAccount, settings: Record<string, unknown>): Promise<void> {
  const response = await call(`${account.base}/settings`, 'PATCH', { token: await managementToken(account), json: settings })
  expect(response.status, response.text).toBe(200)
}
