import type { Page } from 'playwright-core'
import { afterAll, beforeAll, expect, it } from 'vitest'
import type { CreatedAccount } from '../support/herald.js'
import { call, createAccount, managementToken } from '../support/http.js'
import { forEachConsole, lookAt, newPage, openSignedIn } from './support.js'

// Dynamic client registration in the console: the settings that allow it, an initial access token made (shown once)
// and revoked, and the client it registered marked as registered.

forEachConsole('the console manages dynamic client registration in Chromium', (dialect, h, browser) => {
  let account: CreatedAccount
  let page: Page

  beforeAll(async () => {
    account = await createAccount(h.current, 'acme')
    page = await newPage(browser)
  })
  afterAll(async () => {
    await page?.context().close()
  })

  const api = async (method: string, path: string) => call<Record<string, unknown>>(`${account.base}${path}`, method, { token: await managementToken(account) })

  it('turns registration on, makes a token that registers a client, shows that client as registered, and revokes the token', async () => {
    await openSignedIn(page, h.current, account)
    const nav = page.getByRole('navigation', { name: 'Console' })
    await nav.getByRole('link', { name: 'Settings' }).click()
    await page.getByRole('button', { name: 'Edit settings' }).click()
    await page.getByLabel('Clients may register themselves').selectOption('initial_access_token')
    await page.getByLabel('Registered clients unused this long are deleted (days; empty for never)').fill('30')
    await page.getByRole('button', { name: 'Save settings' }).click()
    await page.getByRole('status').filter({ hasText: /^Saved/ }).waitFor()
    expect((await api('GET', '/settings')).body).toMatchObject({ registration: 'initial_access_token', registration_prune_after_days: 30 })
    await page.locator('[data-setting="registration_prune_after_days"]', { hasText: '30 days' }).waitFor()

    await nav.getByRole('link', { name: 'Clients' }).click()
    await page.getByRole('link', { name: 'Registration tokens' }).click()
    await page.getByLabel('Registrations it allows').fill('2')
    await page.getByRole('button', { name: 'Make token' }).click()
    const secret = page.locator('[data-secret]')
    await secret.waitFor()
    const token = (await secret.textContent()) ?? ''
    await lookAt(page, dialect, 'registration-tokens')

    const registered = await call<{ client_id: string }>(`${account.base}/oauth/register`, 'POST', { token, json: { client_name: 'Self-made', redirect_uris: ['https://app.example/callback'] } })
    expect(registered.status, registered.text).toBe(201)
    // The console holds its token in memory: it goes elsewhere and back rather than reloading.
    await nav.getByRole('link', { name: 'Clients' }).click()
    await page.locator(`tr[data-client="${registered.body.client_id}"]`).getByText('registered', { exact: true }).waitFor()

    await page.getByRole('link', { name: 'Registration tokens' }).click()
    const row = page.locator('tr[data-token]')
    expect(await row.locator('td').nth(1).textContent()).toBe('1 of 2')
    const id = await row.getAttribute('data-token')
    await page.getByRole('button', { name: `Revoke ${id}` }).click()
    await page.getByRole('button', { name: 'Revoke for good' }).click()
    await row.waitFor({ state: 'detached' })
    expect((await call(`${account.base}/oauth/register`, 'POST', { token, json: { redirect_uris: ['https://app.example/callback'] } })).status).toBe(401)
  })
})
