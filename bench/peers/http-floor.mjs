// The raw HTTP floor for `npm run bench -- deliveries`: undici straight to the receiver, POSTing bodies and
// headers shaped like Herald's webhooks (precomputed: no signing, no database) with CONNECTIONS requests in
// flight, as fast as it can, for WARMUP_SECONDS and then SECONDS. Run pinned to the core Herald had, so it has
// the same CPU to send with. Prints one JSON line: { requests, seconds, rps, failures }.
import { randomUUID } from 'node:crypto'
import { Agent, request } from 'undici'

const target = process.env.TARGET
const connections = Number(process.env.CONNECTIONS ?? 256)
const seconds = Number(process.env.SECONDS ?? 5)
const warmupSeconds = Number(process.env.WARMUP_SECONDS ?? 1)
if (!target) throw new Error('TARGET is required')

// Like Herald's outbound agent: an undici Agent, no cap on sockets per origin.
const agent = new Agent()
const eventId = `evt_${randomUUID().replace(/-/g, '')}`
const body = `{"type":"bench.event","timestamp":"${new Date().toISOString()}","data":{"order":"ord_0001","amount":4200,"currency":"EUR"}}`
const headers = {
  'content-type': 'application/json',
  'user-agent': 'Herald-Webhooks/0.1',
  'webhook-id': eventId,
  'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
  'webhook-signature': `v1,${Buffer.alloc(32, 7).toString('base64')}`,
}

async function run(durationSeconds) {
  let requests = 0
  let failures = 0
  const until = performance.now() + durationSeconds * 1000
  const started = performance.now()
  const worker = async () => {
    while (performance.now() < until) {
      try {
        const response = await request(target, { dispatcher: agent, method: 'POST', headers, body })
        await response.body.dump()
        if (response.statusCode >= 200 && response.statusCode < 300) requests++
        else failures++
      } catch {
        failures++
      }
    }
  }
  await Promise.all(Array.from({ length: connections }, worker))
  const elapsed = (performance.now() - started) / 1000
  return { requests, failures, seconds: elapsed, rps: requests / elapsed }
}

await run(warmupSeconds)
const result = await run(seconds)
console.log(JSON.stringify(result))
await agent.close()
