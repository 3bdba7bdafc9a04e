import { decodeProtectedHeader } from 'jose'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, expect, it } from 'vitest'
import type { CreatedAccount } from '../support/herald.js'
import { call, createAccount, managementToken } from '../support/http.js'
import { eventually } from '../support/receiver.js'
import { forEachConsole, lookAt, managementClient, newPage, openSignedIn, patchSettings, signIn } from './support.js'

// The settings page: lifetimes in words, the retry schedule as a timeline, retention; editing them, with the API's
// refusals beside their fields; the signing keys, a rotation and a revocation.

forEachConsole('the console shows settings and rotates signing keys in Chromium', (dialect, h, browser) => {
  let account: CreatedAccount
  let page: Page

  beforeAll(async () => {
    account = await createAccount(h.current, 'acme')
    await patchSettings(account, { webhook_retry_schedule: [5, 300, 7200] })
    page = await newPage(browser)
  })
  afterAll(async () => {
    await page?.context().close()
  })

  it('shows the retry schedule as a timeline and the lifetimes in words, and rotates the keys', async () => {
    await openSignedIn(page, h.current, account)
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Settings' }).click()
    const timeline = page.locator('[data-retry-timeline]')
    await timeline.waitFor()
    expect(await timeline.locator('li').allTextContents()).toEqual([
      'Attempt 1: at once',
      'Attempt 2: 5 s later (5 s after the first)',
      'Attempt 3: 5 min later (5 min after the first)',
      'Attempt 4: 2 h later (2.1 h after the first)',
    ])
    expect(await page.locator('[data-setting="access_token_ttl"]').textContent()).toMatch(/ (min|h)$/)
    const signing = page.locator('tr[data-key] .status', { hasText: 'signing' })
    await signing.first().waitFor()
    const before = await page.locator('tr[data-key]').count()
    await page.getByRole('button', { name: 'Rotate keys' }).click()
    await page.getByRole('status').getByText(/^Rotated/).waitFor()
    await page.locator('tr[data-key] .status', { hasText: 'upcoming' }).first().waitFor()
    expect(await page.locator('tr[data-key]').count()).toBeGreaterThan(before)
    await lookAt(page, dialect, 'settings')
  })

  const settingsNow = async () => {
    const response = await call(`${account.base}/settings`, 'GET', { token: await managementToken(account) })
    expect(response.status, response.text).toBe(200)
    return response.body
  }
  const publishedKids = async () => (await call<{ keys: Array<{ kid: string }> }>(`${account.base}/.well-known/jwks.json`, 'GET')).body.keys.map((key) => key.kid)
  const openSettings = async () => {
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Settings' }).click()
    await page.getByRole('button', { name: 'Edit settings' }).click()
    await page.getByRole('form', { name: 'Edit settings' }).waitFor()
  }

  it('changes a lifetime and the retry schedule, and Herald has them', async () => {
    await openSettings()
    const lifetime = page.getByLabel('Access tokens (seconds)', { exact: true })
    await lifetime.fill('1800')
    expect(await page.locator('#setting-access_token_ttl-words').textContent()).toBe('30 min')
    await page.getByLabel('Delays before each retry (seconds, comma-separated)').fill('10, 600, 3600')
    expect(await page.getByRole('form', { name: 'Edit settings' }).locator('[data-retry-timeline] li').allTextContents()).toEqual([
      'Attempt 1: at once',
      'Attempt 2: 10 s later (10 s after the first)',
      'Attempt 3: 10 min later (10 min after the first)',
      'Attempt 4: 1 h later (1.2 h after the first)',
    ])
    await lookAt(page, dialect, 'settings-edit')
    await page.getByRole('button', { name: 'Save settings' }).click()
    expect(await page.getByRole('status').filter({ hasText: /^Saved/ }).textContent()).toMatch(/^Saved 2 settings: Access tokens; Delays before each retry\./)
    expect(await settingsNow()).toMatchObject({ access_token_ttl: 1800, webhook_retry_schedule: [10, 600, 3600] })
    await page.locator('[data-setting="access_token_ttl"]', { hasText: '30 min' }).waitFor()
    expect(await page.locator('[data-retry-timeline] li').count()).toBe(4)
  })

  it("shows the API's refusal beside its field and changes nothing", async () => {
    const before = await settingsNow()
    await openSettings()
    const absolute = page.getByLabel('Refresh tokens, at most (seconds)')
    await absolute.fill('600')
    await page.getByRole('button', { name: 'Save settings' }).click()
    expect(await page.locator('[data-field-error="refresh_token_absolute_ttl"]').textContent()).toBe('must be at least refresh_token_idle_ttl')
    expect(await absolute.getAttribute('aria-invalid')).toBe('true')
    expect(await page.getByRole('alert').textContent()).toBe('refresh_token_absolute_ttl must not be shorter than refresh_token_idle_ttl')
    expect(await settingsNow()).toEqual(before)

    await absolute.fill(String(before.refresh_token_absolute_ttl))
    await page.getByLabel('Login page (https; empty for none)').fill('http://login.example/sign-in')
    await page.getByRole('button', { name: 'Save settings' }).click()
    expect(await page.locator('[data-field-error="login_url"]').textContent()).toBe('must be an https URL (plain http only on 127.0.0.1, [::1] or localhost)')
    expect(await page.locator('[data-field-error]').count()).toBe(1)
    expect(await settingsNow()).toEqual(before)

    await page.getByLabel('Login page (https; empty for none)').fill('')
    await page.getByLabel('Delays before each retry (seconds, comma-separated)').fill('10, 0')
    await page.getByRole('button', { name: 'Save settings' }).click()
    expect(await page.locator('[data-field-error="webhook_retry_schedule"]').textContent()).toBe('delay 2: must be >= 1')
    expect(await settingsNow()).toEqual(before)
    await page.getByRole('button', { name: 'Cancel' }).click()
  })

  it('revokes a key after a rotation, after a confirm step, and the key set no longer lists it', async () => {
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Settings' }).click()
    await page.getByRole('button', { name: 'Rotate keys' }).click()
    await page.getByRole('status').getByText(/^Rotated/).waitFor()
    const upcoming = page.locator('tr[data-key]', { has: page.locator('.status', { hasText: 'upcoming' }) }).first()
    const kid = (await upcoming.getAttribute('data-key'))!
    expect(await publishedKids()).toContain(kid)

    // From the keyboard: the confirm step takes the focus on keeping the key; the revocation is one step back.
    await page.getByRole('button', { name: `Revoke ${kid}` }).press('Enter')
    await page.locator(`[data-confirm-revoke="${kid}"] button:focus`, { hasText: 'Keep it' }).waitFor()
    expect(await page.getByRole('alert').textContent()).toMatch(new RegExp(`^Revoking ${kid} takes it out of the key set at once`))
    await page.keyboard.press('Shift+Tab')
    await page.keyboard.press('Enter')
    expect(await page.getByRole('status').filter({ hasText: /^Key/ }).textContent()).toBe(`Key ${kid} revoked: it has left the key set and signs nothing more.`)
    await page.locator(`tr[data-key="${kid}"] .status`, { hasText: 'revoked' }).waitFor()
    expect(await page.getByRole('button', { name: `Revoke ${kid}` }).count()).toBe(0)
    // The key set is cached per account; the revocation reaches it through Herald's cache invalidation.
    await eventually(async () => !(await publishedKids()).includes(kid), 10_000, `${kid} out of the key set`)
  })

  it("signs out, saying why, after revoking the key that signed the console's own token", async () => {
    // A token got now is signed by the key that signed the console's: no clock has moved since it signed in.
    const own = decodeProtectedHeader(await managementToken(account)).kid!
    await page.getByRole('button', { name: `Revoke ${own}` }).click()
    expect(await page.getByRole('alert').textContent()).toContain("It signed this console's own token, so revoking it signs you out.")
    await page.getByRole('button', { name: 'Revoke for good' }).click()
    await page.getByRole('button', { name: 'Sign in' }).waitFor()
    expect(await page.getByRole('status').textContent()).toBe(
      `Key ${own} revoked: it has left the key set and signs nothing more. It had signed this console's token: sign in again for a token of a key that signs now.`,
    )
    await eventually(async () => !(await publishedKids()).includes(own), 10_000, `${own} out of the key set`)
    await signIn(page, account, account.clientId, account.clientSecret)
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Settings' }).click()
    await page.locator(`tr[data-key="${own}"] .status`, { hasText: 'revoked' }).waitFor()
  })

  it('hides editing and revocation from tokens without their scopes', async () => {
    const reader = await managementClient(account, 'herald:webhooks:read')
    await page.goto(`${h.current.origin}/console/settings`)
    await signIn(page, account, reader.clientId, reader.secret)
    await page.getByRole('heading', { name: 'Page not found' }).waitFor()
    expect(await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Settings' }).count()).toBe(0)
    expect(await page.getByRole('button', { name: /^(Edit settings|Revoke)/ }).count()).toBe(0)

    const settingsOnly = await managementClient(account, 'herald:webhooks:read herald:settings:write')
    await page.goto(`${h.current.origin}/console/settings`)
    await signIn(page, account, settingsOnly.clientId, settingsOnly.secret)
    await page.getByRole('button', { name: 'Edit settings' }).waitFor()
    expect(await page.getByRole('heading', { name: 'Signing keys' }).count()).toBe(0)
    expect(await page.getByRole('button', { name: /^Revoke/ }).count()).toBe(0)
  })
})
