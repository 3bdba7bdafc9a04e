import type { Page } from 'playwright-core'
import { afterAll, beforeAll, expect, it } from 'vitest'
import type { CreatedAccount } from '../support/herald.js'
import { createAccount } from '../support/http.js'
import { Receiver, eventually } from '../support/receiver.js'
import { type Delivery, type Endpoint, type WebhookApi, subscribedEndpoint, webhookApi } from '../webhooks/support.js'
import { forEachConsole, lookAt, newPage, openSignedIn, patchSettings, signIn } from './support.js'

// An endpoint's page beyond the basics: its last 24 hours charted from the stats route, its success rate in the list,
// and the actions on it (edit, the secret, recovery, delete).

forEachConsole('the console charts and manages an endpoint in Chromium', (dialect, h, browser) => {
  let account: CreatedAccount
  let receiver: Receiver
  let api: WebhookApi
  let endpoint: Endpoint
  let page: Page

  beforeAll(async () => {
    account = await createAccount(h.current, 'acme')
    // A failed attempt is retried a day later: the failing delivery stays pending, with one attempt.
    await patchSettings(account, { webhook_retry_schedule: [86_400] })
    receiver = await Receiver.start((request) => ({ status: request.body.includes('"fail":true') ? 500 : 204 }))
    api = await webhookApi(account, h.current.clock)
    endpoint = await subscribedEndpoint(api, receiver.url, ['order.*'])
    for (const fail of [false, false, false, true]) await api.post('/webhooks/events', { type: 'order.placed', data: { fail } })
    await eventually(async () => {
      const page = await api.get<{ data: Delivery[] }>(`/webhooks/deliveries?endpoint_id=${endpoint.id}`)
      return page.body.data.length === 4 && page.body.data.every((delivery) => delivery.attempt_count === 1)
    })
    page = await newPage(browser)
  })
  afterAll(async () => {
    await page?.context().close()
    await receiver?.close()
  })

  it("charts the endpoint's last 24 hours by outcome and latency, and shows its success rate in the list", async () => {
    await openSignedIn(page, h.current, account, 'endpoints')
    const row = page.locator(`tr[data-endpoint="${endpoint.id}"]`)
    await row.getByText('75%').waitFor()
    await lookAt(page, dialect, 'endpoints-success-rate')

    await row.getByRole('link', { name: endpoint.id }).click()
    const activity = page.locator('[data-activity]')
    await activity.waitFor()
    expect(await activity.textContent()).toBe('4 attempts in the last 24 hours: 3 succeeded, 1 failed, 0 errored (75% success).')
    const outcomes = page.getByRole('img', { name: /^Attempts per hour, by outcome/ })
    expect(await outcomes.getAttribute('aria-label')).toBe('Attempts per hour, by outcome: 3 succeeded, 1 failed, 0 errored')
    // All four in the current hour: one green bar and one red on top of it.
    expect(await outcomes.locator('rect.series-ok').count()).toBe(1)
    expect(await outcomes.locator('rect.series-bad').count()).toBe(1)
    const latency = page.getByRole('img', { name: /^Attempt latency per hour/ })
    expect(await latency.locator('g.series-accent circle').count()).toBe(1)
    await lookAt(page, dialect, 'endpoint-activity')
  })

  it('lists its recent deliveries, newest first, with their outcomes', async () => {
    const listed = await api.get<{ data: Delivery[] }>(`/webhooks/deliveries?endpoint_id=${endpoint.id}`)
    const rows = page.locator('tr[data-delivery]')
    await rows.nth(3).waitFor()
    expect(await rows.evaluateAll((found) => found.map((row) => row.getAttribute('data-delivery')))).toEqual(listed.body.data.map((delivery) => delivery.id))
    expect(await rows.locator('.status').allTextContents()).toEqual(listed.body.data.map((delivery) => delivery.status))
    expect((await rows.first().innerText()).includes('order.placed')).toBe(true)
    expect(listed.body.data.map((delivery) => delivery.status).sort()).toEqual(['pending', 'succeeded', 'succeeded', 'succeeded'])
  })

  it('edits the description and the limits, and shows them as saved', async () => {
    await page.getByRole('button', { name: 'Edit' }).click()
    expect(await page.getByLabel('URL').inputValue()).toBe(receiver.url)
    await page.getByLabel('Description').fill('Order service')
    await page.getByLabel(/^Rate limit/).fill('10')
    await page.getByLabel('Attempts in flight at once').fill('5')
    await lookAt(page, dialect, 'endpoint-edit')
    await page.getByRole('button', { name: 'Save' }).click()
    await page.locator('.facts').getByText('10 per second, 5 in flight at once').waitFor()
    expect(await page.locator('.facts').innerText()).toContain('Order service')
    const saved = await api.get<{ description: string; rate_limit: number; max_in_flight: number }>(`/webhooks/endpoints/${endpoint.id}`)
    expect(saved.body).toMatchObject({ description: 'Order service', rate_limit: 10, max_in_flight: 5 })
  })

  it('reveals the signing secret and rotates it, showing the new one once', async () => {
    const secret = page.locator('[data-secret]')
    await page.getByRole('button', { name: 'Reveal secret' }).click()
    await secret.waitFor()
    const before = (await api.get<{ secret: string }>(`/webhooks/endpoints/${endpoint.id}/secret`)).body.secret
    expect(await secret.textContent()).toBe(before)
    await page.getByRole('button', { name: 'Rotate secret' }).click()
    await page.getByText(/^Rotated: this is the new secret, shown once\./).waitFor()
    const after = (await api.get<{ secret: string }>(`/webhooks/endpoints/${endpoint.id}/secret`)).body.secret
    expect(after).not.toBe(before)
    expect(await secret.textContent()).toBe(after)
  })

  it("recovers the endpoint's failed deliveries and follows the job until it is done", async () => {
    // A day and more later, the failing delivery's one retry has failed too.
    h.current.clock.advanceSeconds(110_000)
    const failed = await eventually(async () => {
      const page = await api.get<{ data: Array<Delivery & { created_at: string }> }>(`/webhooks/deliveries?endpoint_id=${endpoint.id}&status=failed`)
      return page.body.data.length === 1 && page.body.data[0]!.attempt_count === 2 && page.body.data[0]!
    }, 15_000, 'the delivery failed')
    // The console's token expired with the clock: sign in again, on the same page.
    await openSignedIn(page, h.current, account, `endpoints/${endpoint.id}`)
    await page.getByLabel('Failed deliveries created since').fill(localInput(Date.parse(failed.created_at) - 3_600_000))
    await page.getByRole('button', { name: 'Recover' }).click()
    await page.getByText('Done: 1 failed delivery queued again.').waitFor()
    await eventually(async () => (await api.get<Delivery>(`/webhooks/deliveries/${failed.id}`)).body.attempt_count === 3, 15_000, 'the recovered delivery attempted')
  })

  it('deletes the endpoint after saying how many unfinished deliveries it cancels', async () => {
    await api.patch(`/webhooks/endpoints/${endpoint.id}`, { status: 'disabled' })
    await api.post('/webhooks/events', { type: 'order.placed', data: { fail: false } })
    await eventually(async () => {
      const page = await api.get<{ data: Delivery[] }>(`/webhooks/deliveries?endpoint_id=${endpoint.id}`)
      return page.body.data.every((delivery) => delivery.status !== 'pending') && page.body.data.some((delivery) => delivery.status === 'held')
    }, 15_000, 'one held delivery and nothing pending')
    await page.reload()
    await signIn(page, account, account.clientId, account.clientSecret)
    await page.getByRole('button', { name: 'Delete endpoint…' }).click()
    const warning = page.getByRole('alert')
    expect(await warning.textContent()).toBe(`Deleting ${endpoint.id} removes its subscriptions and cancels 1 unfinished delivery (pending or held). This can't be undone.`)
    await lookAt(page, dialect, 'endpoint-delete')
    await page.getByRole('button', { name: 'Delete for good' }).click()
    await page.getByText('No endpoints yet.').waitFor()
    expect(new URL(page.url()).pathname).toBe('/console/endpoints')
    expect((await api.get(`/webhooks/endpoints/${endpoint.id}`)).status).toBe(404)
  })

  it("shows a client's logout endpoint read-only, naming the client", async () => {
    const client = await api.post<{ client_id: string }>('/oauth/clients', {
      redirect_uris: ['https://rp.example/cb'],
      grant_types: ['authorization_code'],
      response_types: ['code'],
      scope: 'openid',
      backchannel_logout_uri: `${receiver.url}/logout`,
    })
    expect(client.status, JSON.stringify(client.body)).toBe(201)
    const endpoints = await api.get<{ data: Array<{ id: string; client_id: string | null }> }>('/webhooks/endpoints')
    const logout = endpoints.body.data.find((candidate) => candidate.client_id === client.body.client_id)!
    await page.goto(`${h.current.origin}/console/endpoints/${logout.id}`)
    await signIn(page, account, account.clientId, account.clientSecret)
    await page.locator('[data-client-managed]').getByText(client.body.client_id).waitFor()
    await page.getByRole('button', { name: 'Disable' }).waitFor()
    for (const name of ['Edit', 'Send test event', 'Reveal secret', 'Rotate secret', 'Delete endpoint…']) expect(await page.getByRole('button', { name }).count(), name).toBe(0)
    await lookAt(page, dialect, 'endpoint-client')

    // The note links to the client, whose page edits it.
    await page.locator('[data-client-managed]').getByRole('link', { name: client.body.client_id }).click()
    await page.getByRole('heading', { name: `Client ${client.body.client_id}` }).waitFor()
    expect(await page.getByLabel('Back-channel logout URI (empty for none)').inputValue()).toBe(`${receiver.url}/logout`)
    await page.getByLabel('Name').fill('Logout app')
    await page.getByRole('button', { name: 'Save' }).click()
    await page.getByRole('status').getByText('Saved.').waitFor()
    expect((await api.get<{ client_name: string }>(`/oauth/clients/${client.body.client_id}`)).body.client_name).toBe('Logout app')
    await lookAt(page, dialect, 'client')
  })
})

/** A datetime-local value in this process's zone, which the browser it started shares. */
function localInput(ms: number): string {
  const date = new Date(ms)
  return new Date(ms - date.getTimezoneOffset() * 60_000).toISOString().slice(0, 16)
}
