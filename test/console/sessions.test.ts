import type { Page } from 'playwright-core'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import type { CreatedAccount } from '../support/herald.js'
import { createAccount } from '../support/http.js'
import { Receiver, eventually } from '../support/receiver.js'
import { type Delivery, subscribedEndpoint, webhookApi } from '../webhooks/support.js'
import { forEachConsole, lookAt, managementClient, newPage, openSignedIn, patchSettings, signIn } from './support.js'

// What the console does with what its token allows: the token lives in the page's memory only, a bookmark survives
// a sign-in, a token that expires mid-session leads back to sign-in, a read-only token hides write actions, and
// another account's ids are "not found", never that account's data.

forEachConsole('the console signs in, keeps bookmarks and follows its token in Chromium', (dialect, h, browser) => {
  let account: CreatedAccount
  let receiver: Receiver
  let delivered: Delivery
  let retrying: Delivery
  let page: Page

  beforeAll(async () => {
    account = await createAccount(h.current, 'acme')
    // A failed attempt is retried a day later: the failing delivery stays pending through the tests.
    await patchSettings(account, { webhook_retry_schedule: [86_400] })
    receiver = await Receiver.start((request) => ({ status: request.body.includes('"fail":true') ? 503 : 204 }))
    const api = await webhookApi(account, h.current.clock)
    await subscribedEndpoint(api, receiver.url, ['order.*'])
    await api.post('/webhooks/events', { type: 'order.placed', data: { fail: false } })
    await api.post('/webhooks/events', { type: 'order.cancelled', data: { fail: true } })
    const deliveries = await eventually(async () => {
      const page = await api.get<{ data: Delivery[] }>('/webhooks/deliveries')
      return page.body.data.length === 2 && page.body.data.every((delivery) => delivery.attempt_count === 1) && page.body.data
    })
    delivered = deliveries.find((delivery) => delivery.event_type === 'order.placed')!
    retrying = deliveries.find((delivery) => delivery.event_type === 'order.cancelled')!
  })
  afterAll(async () => {
    await receiver?.close()
  })
  beforeEach(async () => {
    page = await newPage(browser)
  })
  afterEach(async () => {
    await page?.context().close()
  })

  const rows = () => page.locator('tr[data-delivery]')

  describe('signing in', () => {
    it('says what is wrong with refused credentials, and keeps nothing in web storage but the account id', async () => {
      await page.goto(`${h.current.origin}/console/`)
      await signInExpectingRefusal(page, account, account.clientId, 'not-the-secret')
      expect(await page.getByRole('alert').textContent()).toBe('The client id or secret is wrong, or the client is disabled.')
      // Refused: nothing is remembered yet.
      expect(await page.evaluate('localStorage.length')).toBe(0)
      await signIn(page, account, account.clientId, account.clientSecret)
      const stored = await page.evaluate('[Object.entries(localStorage), sessionStorage.length, document.cookie]')
      expect(stored).toEqual([[['herald.console.account', account.id]], 0, ''])
    })

    it('starts the sign-in form after a reload with the account id, and nothing else', async () => {
      await openSignedIn(page, h.current, account)
      await page.reload()
      await page.getByRole('button', { name: 'Sign in' }).waitFor()
      expect(await page.getByLabel('Account id').inputValue()).toBe(account.id)
      expect(await page.getByLabel('Client id').inputValue()).toBe('')
      expect(await page.getByLabel('Client secret').inputValue()).toBe('')
    })

    it('refuses an unknown account in words', async () => {
      await page.goto(`${h.current.origin}/console/`)
      await signInExpectingRefusal(page, { id: 'acct_01JZZZZZZZZZZZZZZZZZZZZZZZ' }, account.clientId, account.clientSecret)
      expect(await page.getByRole('alert').textContent()).toBe('No such account')
    })
  })

  describe('a bookmarked, filtered deliveries URL', () => {
    const bookmark = () => `${h.current.origin}/console/?status=pending&event_type=order.cancelled`

    it('asks to sign in, then shows the view it names, and again after a reload', async () => {
      await page.goto(bookmark())
      await signIn(page, account, account.clientId, account.clientSecret)
      expect(page.url()).toBe(bookmark())
      await rows().first().waitFor()
      expect(await rows().evaluateAll((found) => found.map((row) => row.getAttribute('data-delivery')))).toEqual([retrying.id])
      expect(await page.getByLabel('Status').inputValue()).toBe('pending')
      expect(await page.getByLabel('Event type').inputValue()).toBe('order.cancelled')

      // The token was in memory only: a reload asks again, and lands on the same view.
      await page.reload()
      await signIn(page, account, account.clientId, account.clientSecret)
      expect(page.url()).toBe(bookmark())
      await rows().first().waitFor()
      expect(await rows().count()).toBe(1)
    })

    it('puts the filters applied in the form into the URL', async () => {
      await openSignedIn(page, h.current, account)
      await rows().nth(1).waitFor()
      await page.getByLabel('Status').selectOption('succeeded')
      await page.getByRole('button', { name: 'Apply filters' }).click()
      await page.waitForURL((url) => url.searchParams.get('status') === 'succeeded')
      // The delivered row is in both lists: the new list is the one without the pending row.
      await page.locator(`tr[data-delivery="${retrying.id}"]`).waitFor({ state: 'detached' })
      await page.locator(`tr[data-delivery="${delivered.id}"]`).waitFor()
      expect(await rows().count()).toBe(1)
    })

    it('pages by keyset, newest first, with the cursor in the URL', async () => {
      await page.goto(`${h.current.origin}/console/?limit=1`)
      await signIn(page, account, account.clientId, account.clientSecret)
      await page.locator(`tr[data-delivery="${retrying.id}"]`).waitFor()
      await page.getByRole('link', { name: 'Older deliveries' }).click()
      await page.locator(`tr[data-delivery="${delivered.id}"]`).waitFor()
      expect(new URL(page.url()).searchParams.get('cursor')).toBeTruthy()
      expect(await rows().count()).toBe(1)
      expect(await page.getByRole('link', { name: 'Older deliveries' }).count()).toBe(0)
      await page.getByRole('link', { name: 'Newest' }).click()
      await page.locator(`tr[data-delivery="${retrying.id}"]`).waitFor()
    })
  })

  it('returns to sign-in, saying why, when the token expires mid-session, and comes back to the same page', async () => {
    await patchSettings(account, { access_token_ttl: 60 })
    // The page reads the delivery, then the endpoints' names and the settings: the clock moves once all three were
    // answered, so the expiry meets the Refresh below rather than one of those reads.
    const reads = ['/webhooks/deliveries/', '/webhooks/endpoints', '/settings'].map((path) =>
      page.waitForResponse((response) => new URL(response.url()).pathname.includes(path)),
    )
    await openSignedIn(page, h.current, account, `deliveries/${retrying.id}`)
    await Promise.all(reads)
    await page.getByRole('heading', { name: 'Attempts' }).waitFor()
    h.current.clock.advanceSeconds(61)
    await page.getByRole('button', { name: 'Refresh' }).click()
    await page.getByRole('button', { name: 'Sign in' }).waitFor()
    expect(await page.getByRole('status').textContent()).toBe('Your session has ended (the token expired or was revoked). Sign in again to go on.')
    expect(new URL(page.url()).pathname).toBe(`/console/deliveries/${retrying.id}`)
    await lookAt(page, dialect, 'session-expired')
    await signIn(page, account, account.clientId, account.clientSecret)
    await page.getByRole('heading', { name: 'Attempts' }).waitFor()
    await patchSettings(account, { access_token_ttl: 3600 })
    // Two settings changes, each waited for (up to 10 s) beside two sign-ins: on a busy machine that runs past 30 s.
  }, 60_000)

  it('hides every write action from a read-only token', async () => {
    const reader = await managementClient(account, 'herald:webhooks:read')
    await page.goto(`${h.current.origin}/console/deliveries/${retrying.id}`)
    await signIn(page, account, reader.clientId, reader.secret)
    await page.getByRole('heading', { name: 'Attempts' }).waitFor()
    expect(await page.getByText('read-only').isVisible()).toBe(true)
    expect(await page.getByRole('button', { name: 'Retry now' }).count()).toBe(0)
    // The endpoint, named by its URL (it has no description).
    await page.locator('.facts').getByRole('link', { name: receiver.url }).click()
    await page.getByRole('heading', { name: /^Endpoint ep_/ }).waitFor()
    await page.locator('.facts').getByText('order.*').waitFor()
    expect(await page.getByRole('button', { name: /Disable|Enable/ }).count()).toBe(0)
    expect(await page.getByRole('button', { name: 'Send test event' }).count()).toBe(0)
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Endpoints' }).click()
    await page.locator('tr[data-endpoint]').waitFor()
    expect(await page.getByRole('button', { name: 'Add endpoint' }).count()).toBe(0)
  })

  it('calls a token read-only only when it can change nothing: one that can end sessions is not, and adds no endpoint', async () => {
    const support = await managementClient(account, 'herald:webhooks:read herald:sessions:write')
    await page.goto(`${h.current.origin}/console/endpoints`)
    await signIn(page, account, support.clientId, support.secret)
    await page.locator('tr[data-endpoint]').waitFor()
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Users' }).waitFor()
    expect(await page.getByText('read-only').count()).toBe(0)
    expect(await page.getByRole('button', { name: 'Add endpoint' }).count()).toBe(0)
  })

  it("shows another account's delivery and endpoint as not found, with none of their data", async () => {
    const other = await createAccount(h.current, 'globex')
    await openSignedIn(page, h.current, other, `deliveries/${retrying.id}`)
    await page.getByRole('heading', { name: 'Delivery not found' }).waitFor()
    expect(await page.locator('main').innerText()).not.toContain('order.cancelled')
    await page.goto(`${h.current.origin}/console/endpoints/${retrying.endpoint_id}`)
    await signIn(page, other, other.clientId, other.clientSecret)
    await page.getByRole('heading', { name: 'Endpoint not found' }).waitFor()
    expect(await page.locator('main').innerText()).not.toContain(receiver.url)
    // Its own lists are empty: the deliveries of acme are not among them.
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Deliveries' }).click()
    await page.getByText('No deliveries yet.').waitFor()
  })
})

/** Submits the sign-in form and waits for its refusal. */
async function signInExpectingRefusal(page: Page, account: { id: string }, clientId: string, secret: string): Promise<void> {
  await page.getByLabel('Account id').fill(account.id)
  await page.getByLabel('Client id').fill(clientId)
  await page.getByLabel('Client secret').fill(secret)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.getByRole('alert').waitFor()
}
