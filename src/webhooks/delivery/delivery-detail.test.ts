import { describe, expect, it } from 'vitest'
import type { WebhookAttemptsTable } from '../../platform/storage/schema.js'
import { deliveryDetail } from './delivery-detail.js'

const EVENT = { type: 'oauth.session.ended', data: '{"sid":"s1"}', created_at: Date.parse('2026-01-02T03:04:05.678Z') }

/** Attempt `number`, a second after the event and a second apart, answered 204 unless `recorded` says otherwise. */
function attempt(number: number, recorded: Partial<WebhookAttemptsTable>): WebhookAttemptsTable {
  return { delivery_id: 'dlv_1', number, account_id: 'acct_1', started_at: EVENT.created_at + number * 1000, duration_ms: 5, response_status: 204, error: null, response_excerpt: null, request_url: null, request_signature: null, ...recorded }
}

const SIGNED = { request_url: 'https://rp.example/hook', request_signature: 'v1,abc' }

/** Which deliveries carried a logout token rather than a signed event, and so show neither a body nor webhook headers. */
describe("a delivery's detail", () => {
  const signed = attempt(1, SIGNED)
  const logout = attempt(1, { request_url: 'https://rp.example/logout' })

  it('shows the body and the headers of a signed event', () => {
    expect(deliveryDetail('evt_1', EVENT, [signed], false)).toMatchObject({
      body: '{"type":"oauth.session.ended","timestamp":"2026-01-02T03:04:05.678Z","data":{"sid":"s1"}}',
      attempts: [{ request: { url: 'https://rp.example/hook', headers: { 'webhook-id': 'evt_1', 'webhook-timestamp': '1767323046', 'webhook-signature': 'v1,abc' } } }],
    })
  })

  it("shows neither for a client's logout endpoint, nor once such an endpoint is gone and its attempts tell", () => {
    for (const detail of [deliveryDetail('evt_1', EVENT, [attempt(1, {})], true), deliveryDetail('evt_1', EVENT, [logout], undefined)]) {
      expect(detail.body).toBeNull()
      expect(detail.attempts.map((shown) => shown.request?.headers)).toEqual([null])
    }
    expect(deliveryDetail('evt_1', EVENT, [signed], undefined).body).not.toBeNull()
  })

  it('shows no request for an attempt that sent nothing, or nothing known', () => {
    const detail = deliveryDetail('evt_1', EVENT, [attempt(1, { error: 'signing_failed', response_status: null }), attempt(2, { error: 'worker_lost', response_status: null }), attempt(3, { error: 'timeout', response_status: null, ...SIGNED })], false)
    expect(detail.attempts.map((shown) => shown.request?.url ?? null)).toEqual([null, null, 'https://rp.example/hook'])
    expect(detail.attempts.map((shown) => shown.request === null)).toEqual([true, true, false])
  })
})
