// The webhook receiver for `npm run bench -- deliveries`: a bare node:http server that answers 204 at once.
// It counts what it receives and, while recording, notes when each `webhook-id` first arrived on the monotonic
// clock (process.hrtime, CLOCK_MONOTONIC on Linux: the same clock in every process of the machine), so the
// bench can set arrivals against the times it sent the publishes. Control requests live under /__control/:
//   POST /__control/record     clears the arrivals and the sample, and starts recording
//   GET  /__control/stats      { received, recorded }
//   GET  /__control/arrivals   { arrivals: [[webhook-id, arrival ns as a string], …] }
//   GET  /__control/sample     the first webhook since the last record: { headers, body }
// Prints one JSON line { port } when it listens. PORT=0 (the default) picks a free port.
import { createServer } from 'node:http'

let received = 0
let recording = false
let arrivals = new Map()
let sample
let sampling = false

function json(res, value) {
  const body = JSON.stringify(value)
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) })
  res.end(body)
}

function control(req, res) {
  if (req.method === 'POST' && req.url === '/__control/record') {
    arrivals = new Map()
    sample = undefined
    sampling = true
    recording = true
    return json(res, { ok: true })
  }
  if (req.url === '/__control/stats') return json(res, { received, recorded: arrivals.size })
  if (req.url === '/__control/arrivals') return json(res, { arrivals: [...arrivals].map(([id, at]) => [id, String(at)]) })
  if (req.url === '/__control/sample') return json(res, sample ?? null)
  res.writeHead(404).end()
}

const server = createServer((req, res) => {
  const at = process.hrtime.bigint()
  if (req.url.startsWith('/__control/')) return control(req, res)
  received++
  if (recording) {
    const id = req.headers['webhook-id']
    if (typeof id === 'string' && !arrivals.has(id)) arrivals.set(id, at)
  }
  if (sampling) {
    // Keep the first webhook whole, to check its signature; every other body is left unread.
    sampling = false
    const chunks = []
    req.on('data', (chunk) => chunks.push(chunk))
    req.on('end', () => {
      sample = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8') }
      res.writeHead(204).end()
    })
    return
  }
  res.writeHead(204).end()
})
// The senders keep their connections between phases.
server.keepAliveTimeout = 120_000
server.headersTimeout = 130_000
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  console.log(JSON.stringify({ port: server.address().port }))
})
process.on('SIGTERM', () => server.close(() => process.exit(0)))
