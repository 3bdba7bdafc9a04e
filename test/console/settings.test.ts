import type { Page } from 'playwright-core'
import { afterAll, beforeAll, expect, it } from 'vitest'
import type { CreatedAccount } from '../support/herald.js'
import { call, createAccount, managementToken } from '../support/http.js'
import { forEachConsole, lookAt, newPage, openSignedIn, patchSettings } from './support.js'

// The settings page: lifetimes in words, the retry schedule as a timeline, retention; editing them, with the API's
// refusals beside their fields; the signing keys and a rotation.

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
})
