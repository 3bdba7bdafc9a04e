import { afterEach, expect, it } from 'vitest'
import { forEachDialect, useHerald } from '../support/herald.js'
import { databaseUrl, exited, type HeraldProcess, running, spawnHerald, stop } from '../support/herald-process.js'
import { createAccount } from '../support/http.js'
import { eventually } from '../support/receiver.js'
import { LOCAL_DELIVERY, subscribedEndpoint, useReceiver, webhookApi } from './support.js'

/** `herald worker` beside a serve that delivers nothing itself, as the docs set it up. */
forEachDialect((dialect) => {
  const h = useHerald(dialect, { ...LOCAL_DELIVERY, worker: false })
  const receiver = useReceiver()
  let worker: HeraldProcess | undefined

  afterEach(async () => {
    await stop(worker)
  })

  it('runs without HERALD_WORKER_PORT until it is stopped, delivering meanwhile', async () => {
    worker = spawnHerald('worker', { DATABASE_URL: databaseUrl(h.current.herald.config.database), HERALD_SECRET_KEY: h.current.secretKey, ...LOCAL_DELIVERY.env, LOG_LEVEL: 'info' })
    await eventually(() => worker!.lines.some((line) => line.includes('Herald is delivering webhooks')), 20_000, 'the worker to start')

    const account = await createAccount(h.current)
    const api = await webhookApi(account, h.current.clock)
    await subscribedEndpoint(api, receiver.current.url, ['order.*'])
    const published = await api.post<{ id: string }>('/webhooks/events', { type: 'order.created', data: {} })
    expect(published.status).toBe(201)
    // On SQLite the worker hears of new events by its fallback poll, a few seconds at most.
    await eventually(() => receiver.current.messageIds.includes(published.body.id), 20_000, 'the worker to deliver the event')
    expect(running(worker)).toBe(true)

    const code = exited(worker)
    await stop(worker)
    expect(await code).toBe(0)
  }, 60_000)
})
