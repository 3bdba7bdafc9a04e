import type { Page } from 'playwright-core'
import { afterAll, beforeAll, expect, it } from 'vitest'
import type { CreatedAccount } from '../support/herald.js'
import { createAccount } from '../support/http.js'
import { forEachConsole, lookAt, newPage, openSignedIn, patchSettings } from './support.js'

// The settings page: lifetimes in words, the retry schedule as a timeline, retention; the signing keys and a rotation.

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
})
