import type { Page } from 'playwright-core'
import { afterEach, beforeAll, beforeEach, expect, it } from 'vitest'
import { type CreatedAccount, OPERATOR_TOKEN } from '../support/herald.js'
import { call, createAccount } from '../support/http.js'
import { forEachConsole, lookAt, newPage } from './support.js'

// A sign-in link from the operator: the console takes its code out of the address bar at once, spends it once for a
// token held in memory, and lands on the deliveries; the same link again says it is spent and offers the form.

forEachConsole('the console signs in with a single-use link in Chromium', (dialect, h, browser) => {
  let account: CreatedAccount
  let page: Page

  beforeAll(async () => {
    account = await createAccount(h.current, 'acme')
  })
  beforeEach(async () => {
    page = await newPage(browser)
  })
  afterEach(async () => {
    await page?.context().close()
  })

  async function link(json: Record<string, unknown> = {}): Promise<string> {
    const made = await call<{ url: string }>(`${h.current.origin}/accounts/${account.id}/console-links`, 'POST', { token: OPERATOR_TOKEN, json })
    expect(made.status, made.text).toBe(201)
    return made.body.url
  }

  it('signs in with the link, on the deliveries page, with the code gone from the address bar and nothing but the account id stored', async () => {
    const url = await link()
    await page.goto(url)
    await page.getByRole('button', { name: 'Sign out' }).waitFor()
    await page.getByRole('heading', { name: 'Deliveries' }).waitFor()
    await page.getByText('No deliveries yet.').waitFor()
    expect(page.url()).toBe(`${h.current.origin}/console/`)
    // The account id alone is remembered, for the sign-in form after a reload: no token, no code.
    expect(await page.evaluate('[location.hash, Object.entries(localStorage), sessionStorage.length, document.cookie]')).toEqual(['', [['herald.console.account', account.id]], 0, ''])
    // Every scope by default: nothing is read-only, and the empty list offers to add an endpoint.
    expect(await page.getByText('read-only').count()).toBe(0)
    expect(await page.getByRole('link', { name: 'Add an endpoint' }).count()).toBe(1)

    // The same link a second time (another tab, or the history): spent, said in words, with the form to sign in.
    const again = await page.context().newPage()
    await again.goto(url)
    await again.getByRole('button', { name: 'Sign in' }).waitFor()
    expect(await again.getByRole('status').textContent()).toContain('This sign-in link was already used or has expired')
    expect(again.url()).toBe(`${h.current.origin}/console/`)
    expect(await again.getByLabel('Account id').inputValue()).toBe(account.id)
    await lookAt(again, dialect, 'sign-in-link-spent')
  })

  it("gives the link's scopes only: a read-only link hides the write actions", async () => {
    await page.goto(await link({ scope: 'herald:webhooks:read' }))
    await page.getByRole('button', { name: 'Sign out' }).waitFor()
    expect(page.url()).toBe(`${h.current.origin}/console/`)
    expect(await page.getByText('read-only').isVisible()).toBe(true)
    // The empty lists say who can add an endpoint, rather than offering to.
    await page.getByText('No deliveries yet.').waitFor()
    expect(await page.getByRole('link', { name: 'Add an endpoint' }).count()).toBe(0)
    await page.getByText('A client with herald:webhooks:write can add endpoints.').waitFor()
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Endpoints' }).click()
    await page.getByText('No endpoints yet.').waitFor()
    expect(await page.getByRole('button', { name: 'Add endpoint' }).count()).toBe(0)
  })

  it('says so, with the sign-in form, when the link has expired', async () => {
    const url = await link({ expires_in: 60 })
    h.current.clock.advanceSeconds(61)
    await page.goto(url)
    await page.getByRole('button', { name: 'Sign in' }).waitFor()
    expect(await page.getByRole('status').textContent()).toContain('This sign-in link was already used or has expired')
    expect(page.url()).toBe(`${h.current.origin}/console/`)
  })
})
