import type { Page } from 'playwright-core'
import { afterAll, beforeAll, expect, it } from 'vitest'
import type { CreatedAccount } from '../support/herald.js'
import { createAccount } from '../support/http.js'
import { Receiver, eventually } from '../support/receiver.js'
import { type Delivery, type Endpoint, type WebhookApi, subscribedEndpoint, webhookApi } from '../webhooks/support.js'
import { forEachConsole, lookAt, newPage, openSignedIn } from './support.js'

// Events: the list with its type filter in the URL, an event with the deliveries it made, the catalog of types, and
// publishing from a form with the API's refusals in words.

forEachConsole('the console lists, shows and publishes events in Chromium', (dialect, h, browser) => {
  let account: CreatedAccount
  let receiver: Receiver
  let api: WebhookApi
  let orders: Endpoint
  let page: Page

  beforeAll(async () => {
    account = await createAccount(h.current, 'acme')
    receiver = await Receiver.start()
    api = await webhookApi(account, h.current.clock)
    orders = await subscribedEndpoint(api, receiver.url, ['order.*'])
    await subscribedEndpoint(api, `${receiver.url}/audit`, ['*'])
    await api.post('/webhooks/events', { type: 'order.placed', data: { order: 1 } })
    await api.post('/webhooks/events', { type: 'invoice.paid', data: { invoice: 2 } })
    await eventually(async () => {
      const page = await api.get<{ data: Delivery[] }>('/webhooks/deliveries')
      return page.body.data.length === 3 && page.body.data.every((delivery) => delivery.status === 'succeeded')
    })
    page = await newPage(browser)
  })
  afterAll(async () => {
    await page?.context().close()
    await receiver?.close()
  })

  it('lists the events, filters them by type in the URL, and shows one with the deliveries it made', async () => {
    await openSignedIn(page, h.current, account, 'events')
    await page.locator('tr[data-event]').nth(1).waitFor()
    await page.getByLabel('Type').fill('order.placed')
    await page.getByRole('button', { name: 'Apply filter' }).click()
    await page.waitForURL((url) => url.searchParams.get('type') === 'order.placed')
    await page.getByRole('cell', { name: 'invoice.paid' }).waitFor({ state: 'detached' })
    // The filtered list's rows, once they come: the page shows none of the unfiltered list's meanwhile.
    await page.locator('tr[data-event]').first().waitFor()
    expect(await page.locator('tr[data-event]').count()).toBe(1)
    await lookAt(page, dialect, 'events')

    await page.locator('tr[data-event] a[href*="/events/evt"]').click()
    await page.getByRole('heading', { name: 'Deliveries' }).waitFor()
    await page.locator('tr[data-delivery]').nth(1).waitFor()
    expect(await page.locator('tr[data-delivery] .status').allTextContents()).toEqual(['succeeded', 'succeeded'])
    expect(await page.locator(`tr[data-delivery] a[href$="/endpoints/${orders.id}"]`).count()).toBe(1)
    // Endpoints without a description go by their URL.
    await page.locator('tr[data-delivery] .name').nth(1).waitFor()
    expect((await page.locator('tr[data-delivery] .name').allTextContents()).sort()).toEqual([receiver.url, `${receiver.url}/audit`])
    expect(await page.locator(`tr[data-delivery] a[href$="/endpoints/${orders.id}"]`).textContent()).toBe(receiver.url)
    expect(await page.locator('.payload').textContent()).toContain('"order": 1')
    await lookAt(page, dialect, 'event')
  })

  it('shows the catalog of event types with examples', async () => {
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Events' }).click()
    await page.getByRole('link', { name: 'Event types' }).click()
    const custom = page.locator('[data-event-type="invoice.paid"]')
    await custom.waitFor()
    expect(await custom.getByText('custom').count()).toBe(1)
    expect(await page.locator('[data-event-type^="oauth."]').count()).toBeGreaterThan(0)
    await lookAt(page, dialect, 'event-types')
  })

  it('publishes an event from the form, and says in words what is wrong with refused ones', async () => {
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Events' }).click()
    await page.getByRole('button', { name: 'Publish an event' }).click()
    const form = page.getByRole('form', { name: 'Publish an event' })
    await form.getByLabel('Type').fill('order.shipped')
    await form.getByLabel('Data (a JSON object)').fill('{"order": 1')
    await form.getByRole('button', { name: 'Publish' }).click()
    expect(await form.getByRole('alert').textContent()).toMatch(/^The data is not valid JSON/)
    await form.getByLabel('Data (a JSON object)').fill('[1, 2]')
    await form.getByRole('button', { name: 'Publish' }).click()
    await form.getByRole('alert').getByText('The data must be a JSON object').waitFor()
    // A reserved type: the API's 400, in its words.
    await form.getByLabel('Type').fill('oauth.made.up')
    await form.getByLabel('Data (a JSON object)').fill('{"order": 1}')
    await form.getByRole('button', { name: 'Publish' }).click()
    await form.getByRole('alert').getByText(/^Herald refused the event \(4\d\d\): /).waitFor()
    await lookAt(page, dialect, 'event-publish')

    await form.getByLabel('Type').fill('order.shipped')
    await form.getByRole('button', { name: 'Publish' }).click()
    await page.getByRole('heading', { name: /^Event evt_/ }).waitFor()
    await page.locator('tr[data-delivery]').nth(1).waitFor()
    expect(await page.locator('.facts').innerText()).toContain('order.shipped')
  })

  it('publishes once under an idempotency key: the same key again opens the event first published', async () => {
    const publish = async () => {
      await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Events' }).click()
      await page.getByRole('button', { name: 'Publish an event' }).click()
      const form = page.getByRole('form', { name: 'Publish an event' })
      await form.getByLabel('Type').fill('order.refunded')
      await form.getByLabel('Data (a JSON object)').fill('{"order": 7}')
      await form.getByLabel('Idempotency key (optional)').fill('refund-7')
      await form.getByRole('button', { name: 'Publish' }).click()
      await page.getByRole('heading', { name: /^Event evt_/ }).waitFor()
      return new URL(page.url()).pathname
    }
    const first = await publish()
    expect(await publish()).toBe(first)
    const listed = await api.get<{ data: Array<{ id: string; idempotency_key: string | null }> }>('/webhooks/events?type=order.refunded')
    expect(listed.body.data.map((event) => [`/console/events/${event.id}`, event.idempotency_key])).toEqual([[first, 'refund-7']])
  })
})
