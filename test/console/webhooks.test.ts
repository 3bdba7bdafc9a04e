import type { Page } from 'playwright-core'
import { afterAll, beforeAll, expect, it } from 'vitest'
import type { CreatedAccount } from '../support/herald.js'
import { createAccount } from '../support/http.js'
import { Receiver, eventually } from '../support/receiver.js'
import { type Delivery, webhookApi } from '../webhooks/support.js'
import { forEachConsole, lookAt, newPage, openSignedIn, patchSettings, refreshUntil } from './support.js'

// The README's path, as a new user takes it: sign in with the credentials `accounts create` printed, add an endpoint
// on a local receiver, send it a test event and watch it succeed; make the receiver fail and watch the retries with
// their codes; retry by hand; disable and enable the endpoint on the way.

forEachConsole('the console shows deliveries and acts on endpoints in Chromium', (dialect, h, browser) => {
  let account: CreatedAccount
  let receiver: Receiver
  let page: Page
  /** What the page logged against its Content-Security-Policy, or threw: the console must need neither. */
  const refusals: string[] = []

  beforeAll(async () => {
    account = await createAccount(h.current)
    // Two retries, 5 s apart: the whole schedule runs out within a few clock steps.
    await patchSettings(account, { webhook_retry_schedule: [5, 5] })
    receiver = await Receiver.start()
    page = await newPage(browser)
    page.on('console', (message) => {
      if (/Content.Security.Policy/i.test(message.text())) refusals.push(message.text())
    })
    page.on('pageerror', (error) => refusals.push(error.message))
  })
  afterAll(async () => {
    expect(refusals).toEqual([])
    await page?.context().close()
    await receiver?.close()
  })

  const statusOf = (page: Page) => page.locator('.facts .status').first().textContent()
  const attempts = (page: Page) => page.locator('.timeline .attempt').allInnerTexts()
  /** The delivery page's link to its endpoint, which it names by its description. */
  const endpointLink = (page: Page) => page.locator('.facts').getByRole('link', { name: 'Local receiver' })

  /** Sends the endpoint a test event from its page and opens the one delivery the answer links to. */
  async function sendTestEvent(): Promise<void> {
    await page.getByRole('button', { name: 'Send test event' }).click()
    await page.getByRole('status').getByRole('link', { name: /^delivery dlv_/ }).click()
    await page.getByRole('heading', { name: 'Attempts' }).waitFor()
  }

  it('signs in, shows the empty states, and adds an endpoint subscribed in the same form', async () => {
    await page.goto(`${h.current.origin}/console/`)
    await lookAt(page, dialect, 'sign-in')
    await openSignedIn(page, h.current, account)
    await page.getByText('No deliveries yet.').waitFor()
    await page.getByRole('link', { name: 'Endpoints' }).click()
    await page.getByText('No endpoints yet.').waitFor()
    await page.getByRole('button', { name: 'Add endpoint' }).click()
    await page.getByLabel('URL').fill(receiver.url)
    await page.getByLabel('Description').fill('Local receiver')
    await page.getByLabel('Rate limit').fill('50')
    await page.getByLabel('Attempts in flight at once').fill('5')
    await page.getByLabel('Event types').fill('invoice.*')
    await page.getByRole('button', { name: 'Add endpoint' }).click()
    await page.getByRole('heading', { name: /^Endpoint ep_/ }).waitFor()
    await page.locator('.facts').getByText('invoice.*').waitFor()
    await page.getByText('50 per second, 5 in flight at once').waitFor()
    await lookAt(page, dialect, 'endpoint')
  })

  it('sends a webhook.test event to this endpoint, which subscribes to invoice.* only, and shows its delivery succeed, with its attempt', async () => {
    const endpointId = new URL(page.url()).pathname.split('/').pop()!
    await sendTestEvent()
    await refreshUntil(page, async () => (await statusOf(page)) === 'succeeded', 'the delivery succeed')
    const [first] = await attempts(page)
    expect(first).toMatch(/Attempt 1\s+HTTP 204/)
    expect(await page.locator('.payload').textContent()).toContain(`"endpoint_id": "${endpointId}"`)
    expect(receiver.requests).toHaveLength(1)
    const [received] = receiver.requests
    expect((JSON.parse(received!.body) as { type: string }).type).toBe('webhook.test')

    // What was sent, beside the answer: the URL, the Standard Webhooks headers as received, and the body to the byte.
    await endpointLink(page).waitFor()
    const attempt = page.locator('[data-attempt="1"]')
    expect(await attempt.locator('.request').getByText(`POST ${receiver.url}`).count()).toBe(1)
    for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature']) {
      expect(await attempt.locator(`[data-header="${name}"]`).textContent(), name).toBe(received!.headers[name])
    }
    expect(await page.locator('[data-body]').textContent()).toBe(received!.body)
    // Times read as relative, with the exact time on hover.
    const api = await webhookApi(account, h.current.clock)
    const deliveryId = new URL(page.url()).pathname.split('/').pop()!
    const createdAt = (await api.get<Delivery & { created_at: string }>(`/webhooks/deliveries/${deliveryId}`)).body.created_at
    const created = page.locator('.facts time').first()
    expect(await created.getAttribute('datetime')).toBe(createdAt)
    expect(await created.getAttribute('title')).toContain(`${createdAt.replace('T', ' ').slice(0, 19)} UTC`)
    expect(await created.textContent()).toMatch(/^(just now|in a moment|(in )?\d+ (s|min|h|d)( ago)?)$/)
    await lookAt(page, dialect, 'delivery')
  })

  it('shows the retries of a failing receiver with their codes, then the delivery failed, and retries it by hand', async () => {
    receiver.respond = () => ({ status: 500, body: 'database is down' })
    await endpointLink(page).click()
    await sendTestEvent()
    await refreshUntil(page, async () => (await attempts(page)).length === 1, 'the first attempt')
    expect(await statusOf(page)).toBe('pending')
    expect(await page.getByRole('heading', { name: 'Still ahead' }).isVisible()).toBe(true)
    // The schedule comes from the account's settings, read beside the delivery.
    await page.locator('.ahead').getByText('Attempt 3: about 5 s after the one before').waitFor()
    expect(await page.locator('.ahead').innerText()).toMatch(/^Attempt 2: .+\nAttempt 3: about 5 s after the one before$/)
    await lookAt(page, dialect, 'delivery-retrying')
    for (const attempt of [2, 3]) {
      h.current.clock.advanceSeconds(7)
      await refreshUntil(page, async () => (await attempts(page)).length === attempt, `attempt ${attempt}`)
    }
    await refreshUntil(page, async () => (await statusOf(page)) === 'failed', 'the delivery failed')
    const shown = await attempts(page)
    expect(shown).toHaveLength(3)
    for (const [i, text] of shown.entries()) {
      expect(text).toMatch(new RegExp(`Attempt ${i + 1}\\s+HTTP 500`))
      expect(text).toContain('database is down')
    }
    expect(await page.getByRole('heading', { name: 'Still ahead' }).count()).toBe(0)
    await lookAt(page, dialect, 'delivery-failed')

    receiver.respond = () => ({ status: 200, body: 'ok' })
    await page.getByRole('button', { name: 'Retry now' }).click()
    expect(await page.getByRole('status').textContent()).toContain('Queued for another attempt now.')
    await refreshUntil(page, async () => (await statusOf(page)) === 'succeeded', 'the retried delivery succeed')
    expect((await attempts(page))[3]).toMatch(/Attempt 4\s+HTTP 200/)
  })

  it('disables the endpoint, holds its new delivery and says why a retry is refused, then enables it and the delivery goes out', async () => {
    await endpointLink(page).click()
    await page.getByRole('button', { name: 'Disable' }).click()
    await page.getByRole('button', { name: 'Enable' }).waitFor()
    expect(await statusOf(page)).toBe('disabled')
    await sendTestEvent()
    await refreshUntil(page, async () => (await statusOf(page)) === 'held', 'the delivery held')
    await page.getByRole('button', { name: 'Retry now' }).click()
    expect(await page.getByRole('alert').textContent()).toContain("Can't retry: The endpoint is disabled: enable it and its held deliveries flow")

    await endpointLink(page).click()
    await page.getByRole('button', { name: 'Enable' }).click()
    await page.getByRole('button', { name: 'Disable' }).waitFor()
    await page.getByRole('link', { name: 'Its deliveries' }).click()
    // Three rows, none held: an empty list (still loading) has no held row either.
    await refreshUntil(page, async () => {
      const statuses = await page.locator('tr[data-delivery] .status').allTextContents()
      return statuses.length === 3 && statuses.every((status) => status !== 'held')
    }, 'the held delivery go out')
    expect(await page.locator('tr[data-delivery] .status').allTextContents()).toEqual(['succeeded', 'succeeded', 'succeeded'])
    // Each row names its endpoint by its description.
    await page.locator('tr[data-delivery] .name').nth(2).waitFor()
    expect(await page.locator('tr[data-delivery] .name').allTextContents()).toEqual(['Local receiver', 'Local receiver', 'Local receiver'])
    await lookAt(page, dialect, 'deliveries')
    // The dark theme follows the system's preference.
    const background = () => page.evaluate('getComputedStyle(document.body).backgroundColor')
    const light = await background()
    await page.emulateMedia({ colorScheme: 'dark' })
    expect(await background()).not.toBe(light)
    await lookAt(page, dialect, 'deliveries-dark')
    await page.emulateMedia({ colorScheme: 'light' })
    await page.getByRole('link', { name: 'Endpoints' }).click()
    await page.locator('tr[data-endpoint]').waitFor()
    await lookAt(page, dialect, 'endpoints')
  })

  it('shows a delivery published meanwhile while the list is live, without a reload, and keeps the filter', async () => {
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Deliveries' }).click()
    await page.getByLabel('Status').selectOption('succeeded')
    await page.getByRole('button', { name: 'Apply filters' }).click()
    await page.waitForURL((url) => url.searchParams.get('status') === 'succeeded')
    await page.locator('tr[data-delivery]').first().waitFor()
    expect(await page.getByRole('checkbox', { name: 'Live' }).isChecked()).toBe(true)
    // A full reload would lose this.
    await page.evaluate('window.stayedOpen = true')

    const api = await webhookApi(account, h.current.clock)
    const published = await api.post<{ id: string }>('/webhooks/events', { type: 'invoice.live', data: { live: true } })
    expect(published.status).toBe(201)
    const delivered = await eventually(async () => {
      const listed = await api.get<{ data: Delivery[] }>(`/webhooks/deliveries?event_id=${published.body.id}&status=succeeded`)
      return listed.body.data[0]
    }, 15_000, 'the delivery succeeded')
    await page.locator(`tr[data-delivery="${delivered.id}"]`).waitFor({ timeout: 15_000 })
    expect(await page.evaluate('window.stayedOpen')).toBe(true)
    expect(new URL(page.url()).searchParams.get('status')).toBe('succeeded')
    expect(await page.getByLabel('Status').inputValue()).toBe('succeeded')
  })
})
