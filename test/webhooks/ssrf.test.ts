import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type CreatedAccount, forEachDialect, startHerald, type TestHerald, useHerald } from '../support/herald.js'
import { type ApiResponse, call, createAccount, managementToken } from '../support/http.js'
import { eventually, Receiver } from '../support/receiver.js'
import { type Delivery, type Endpoint, LOCAL_DELIVERY, subscribedEndpoint, webhookApi } from './support.js'

/**
 * Endpoint URLs can't aim Herald at the inside of its own network. Without HERALD_WEBHOOK_ALLOWED_CIDRS, a URL
 * whose host is, or resolves to, a loopback, private, link-local or otherwise non-public address is refused when
 * it is created or changed, however the address is spelt; and an address that is refused when an attempt is sent
 * is a recorded, failed attempt (`blocked_address`), not a silent skip.
 */

interface Problem {
  code: string
  errors?: Array<{ pointer: string; message: string }>
}

/** Plain http is allowed here, so only the address check can refuse these. */
const NON_PUBLIC_URLS = [
  'http://127.0.0.1/',
  'http://127.0.0.1:8080/hooks',
  'http://127.1/',
  'http://0177.0.0.1/',
  'http://2130706433/',
  'http://0x7f.1/',
  'http://0/',
  'http://0.0.0.0/',
  'http://localhost/',
  'http://LOCALHOST:3000/hooks',
  'http://[::1]/',
  'http://[::]/',
  'http://[::ffff:127.0.0.1]/',
  'http://[::ffff:169.254.169.254]/',
  'http://[64:ff9b::7f00:1]/',
  'http://169.254.169.254/latest/meta-data/',
  'http://10.0.0.1/',
  'http://172.16.0.1/',
  'http://192.168.1.1/',
  'http://100.64.0.1/',
  'http://[fd00::1]/',
  'http://[fe80::1]/',
  'http://224.0.0.1/',
  'http://255.255.255.255/',
]

/** A public address literal: accepted without any DNS lookup, and never subscribed, so never called. */
const PUBLIC_URL = 'https://93.184.215.14/hooks'

function expectUrlRefused(response: ApiResponse<Problem>, url: string): void {
  const where = `${url}: ${response.status} ${response.text.slice(0, 300)}`
  expect(response.status, where).toBe(400)
  expect(response.headers.get('content-type'), where).toMatch(/^application\/problem\+json(;|$)/)
  expect(response.body.code, where).toBe('validation_failed')
  expect(response.body.errors?.map((error) => error.pointer), where).toEqual(['/body/url'])
}

forEachDialect((dialect) => {
  describe('without an allow-list, plain http allowed', () => {
    const h = useHerald(dialect, { env: { HERALD_WEBHOOK_ALLOW_HTTP: 'true' } })
    let account: CreatedAccount
    let token: string

    beforeAll(async () => {
      account = await createAccount(h.current)
      token = await managementToken(account)
    })

    const listed = async () => (await call<{ data: Endpoint[] }>(`${account.base}/webhooks/endpoints?limit=200`, 'GET', { token })).body.data

    it('refuses every spelling of a non-public address, and creates nothing', async () => {
      for (const url of NON_PUBLIC_URLS) {
        const response = await call<Problem>(`${account.base}/webhooks/endpoints`, 'POST', { token, json: { url } })
        expectUrlRefused(response, url)
      }
      expect(await listed()).toEqual([])
    })

    it('says which address it refused, and which name led there', async () => {
      const detail = async (url: string) => (await call<Problem & { detail: string }>(`${account.base}/webhooks/endpoints`, 'POST', { token, json: { url } })).body.detail
      expect(await detail('http://0x7f.1/')).toBe('url must not point at a loopback address (127.0.0.1)')
      expect(await detail('http://localhost/')).toMatch(/^url must not point at a loopback address \(localhost is (127\.0\.0\.1|::1)\)$/)
      expect(await detail('http://0/')).toBe('url must not point at an unspecified address (0.0.0.0)')
      expect(await detail('http://[fd00::1]/')).toMatch(/^url must not point at a unique-local address \(/)
    })

    it('refuses changing an endpoint to a non-public address, and keeps its URL', async () => {
      const created = await call<Endpoint>(`${account.base}/webhooks/endpoints`, 'POST', { token, json: { url: PUBLIC_URL } })
      expect(created.status).toBe(201)
      for (const url of ['http://127.0.0.1/', 'http://localhost/', 'http://[::ffff:127.0.0.1]/', 'http://169.254.169.254/', 'http://10.0.0.1/', 'http://0x7f.1/']) {
        const response = await call<Problem>(`${account.base}/webhooks/endpoints/${created.body.id}`, 'PATCH', { token, json: { url } })
        expectUrlRefused(response, url)
      }
      // A refused URL next to a valid change refuses the whole request.
      const mixed = await call<Problem>(`${account.base}/webhooks/endpoints/${created.body.id}`, 'PATCH', { token, json: { url: 'http://127.0.0.1/', description: 'changed' } })
      expectUrlRefused(mixed, 'mixed')
      const after = await call<Endpoint & { description: string }>(`${account.base}/webhooks/endpoints/${created.body.id}`, 'GET', { token })
      expect(after.body).toMatchObject({ url: PUBLIC_URL, description: '', status: 'active' })
      expect((await listed()).map((endpoint) => endpoint.url)).toEqual([PUBLIC_URL])
    })
  })

  describe('without HERALD_WEBHOOK_ALLOW_HTTP', () => {
    const h = useHerald(dialect)

    it('refuses plain http, and non-public addresses over https', async () => {
      const account = await createAccount(h.current)
      const token = await managementToken(account)
      for (const url of ['http://example.com/', 'http://93.184.215.14/hooks', 'https://127.0.0.1/', 'https://localhost/', 'https://[::1]/', 'https://169.254.169.254/']) {
        const response = await call<Problem>(`${account.base}/webhooks/endpoints`, 'POST', { token, json: { url } })
        expectUrlRefused(response, url)
      }
      const plain = await call<Problem & { detail: string }>(`${account.base}/webhooks/endpoints`, 'POST', { token, json: { url: 'http://example.com/' } })
      expect(plain.body.detail).toMatch(/https/)
      const listed = await call<{ data: Endpoint[] }>(`${account.base}/webhooks/endpoints`, 'GET', { token })
      expect(listed.body.data).toEqual([])
      // The same public address over https is fine: the refusals above are about the scheme and the address.
      expect((await call(`${account.base}/webhooks/endpoints`, 'POST', { token, json: { url: PUBLIC_URL } })).status).toBe(201)
    })
  })

  describe('an address refused when the attempt is sent', () => {
    let strict: TestHerald
    let permissive: TestHerald
    let receiver: Receiver

    beforeAll(async () => {
      // The strict instance owns the database and runs the only worker; the permissive one, which allows
      // 127.0.0.0/8, is how an endpoint on loopback got into the database (as if the allow-list changed since).
      strict = await startHerald(dialect, { env: { HERALD_WEBHOOK_ALLOW_HTTP: 'true' } })
      permissive = await startHerald(dialect, { ...LOCAL_DELIVERY, shareWith: strict, worker: false })
      receiver = await Receiver.start()
    })

    afterAll(async () => {
      await receiver?.close()
      await permissive?.close()
      await strict?.close()
    })

    it('records the attempt as blocked_address, schedules a retry, and sends nothing', async () => {
      const account = await createAccount(permissive)
      const api = await webhookApi(account, permissive.clock)
      const endpoint = await subscribedEndpoint(api, receiver.url, ['invoice.*'])
      const published = await api.post<{ id: string }>('/webhooks/events', { type: 'invoice.paid', data: { amount: 1 } })
      expect(published.status).toBe(201)

      const delivery = await eventually(async () => {
        // Wakes the strict worker: on SQLite no notification crosses instances.
        strict.clock.advance(0)
        const page = await api.get<{ data: Delivery[] }>(`/webhooks/deliveries?event_id=${published.body.id}`)
        const found = page.body.data.find((item) => item.attempt_count >= 1)
        return found && (await api.get<Delivery>(`/webhooks/deliveries/${found.id}`)).body
      }, 15_000, 'the first attempt')

      expect(delivery).toMatchObject({ endpoint_id: endpoint.id, status: 'pending', attempt_count: 1, last_error: 'blocked_address', last_response_status: null })
      expect(delivery.next_attempt_at).not.toBeNull()
      expect(delivery.attempts).toHaveLength(1)
      expect(delivery.attempts![0]).toMatchObject({ number: 1, error: 'blocked_address', response_status: null, response_excerpt: null })
      expect(receiver.requests).toHaveLength(0)
    })
  })
})
