import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { once } from 'node:events'
import { Webhook, WebhookVerificationError } from 'standardwebhooks'
import { UsageError } from './args.js'

/** Herald's largest body: a 256 KiB event's data, and its type and timestamp. */
const MAX_BODY_BYTES = 512 * 1024
const DEFAULT_PORT = 9000
/** A signing secret as Herald makes and takes them: `whsec_` and base64. */
const SECRET = /^whsec_[A-Za-z0-9+/]+={0,2}$/

export interface ListenOptions {
  secret: string | undefined
  port: string | undefined
}

/**
 * `herald listen`: a webhook receiver for development. It verifies each delivery with the endpoint's secret, as any
 * Standard Webhooks receiver does (the reference library, so Herald's signatures meet an independent check), prints
 * it, and answers 204; a delivery that fails verification gets 400, which Herald records and retries.
 */
export async function listen(options: ListenOptions, out: (line: string) => void): Promise<number> {
  const verifier = signingVerifier(options.secret)
  const port = listenPort(options.port)
  const server = createServer((request, response) => {
    receive(request, response, verifier, out).catch((error: unknown) => {
      out(`error     ${String(error)}`)
      if (!response.headersSent) response.writeHead(500)
      response.end()
    })
  })
  const stopped = new Promise<void>((resolve) => {
    process.once('SIGINT', resolve)
    process.once('SIGTERM', resolve)
  })
  server.listen(port, '127.0.0.1')
  await once(server, 'listening')
  out(`Listening on http://127.0.0.1:${port}/ for webhooks signed with the secret given; Ctrl+C stops.`)
  await stopped
  server.closeAllConnections()
  server.close()
  return 0
}

async function receive(request: IncomingMessage, response: ServerResponse, verifier: Webhook, out: (line: string) => void): Promise<void> {
  if (request.method !== 'POST') {
    response.writeHead(405, { allow: 'POST' }).end()
    return
  }
  const body = await readBody(request)
  if (body === undefined) {
    out(`rejected  a body over ${MAX_BODY_BYTES} bytes`)
    response.writeHead(413).end()
    return
  }
  const id = header(request, 'webhook-id')
  try {
    verifier.verify(body, { 'webhook-id': id, 'webhook-timestamp': header(request, 'webhook-timestamp'), 'webhook-signature': header(request, 'webhook-signature') })
  } catch (error) {
    if (!(error instanceof WebhookVerificationError)) throw error
    out(`rejected  ${id || '(no webhook-id)'}  ${error.message}`)
    response.writeHead(400, { 'content-type': 'text/plain' }).end(error.message)
    return
  }
  out(`verified  ${id}  ${describePayload(body)}`)
  response.writeHead(204).end()
}

/** `type  data` of a Herald payload; the body itself if it is not one. */
function describePayload(body: string): string {
  try {
    const payload: unknown = JSON.parse(body)
    if (typeof payload === 'object' && payload !== null && 'type' in payload && 'data' in payload) return `${String(payload.type)}  ${JSON.stringify(payload.data)}`
  } catch {
    // Not JSON: shown as it came.
  }
  return body
}

function header(request: IncomingMessage, name: string): string {
  const value = request.headers[name]
  return Array.isArray(value) ? value.join(' ') : (value ?? '')
}

/** The body as text, or undefined past MAX_BODY_BYTES. */
async function readBody(request: IncomingMessage): Promise<string | undefined> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length
    if (size > MAX_BODY_BYTES) return undefined
    chunks.push(chunk)
  }
  return Buffer.concat(chunks).toString('utf8')
}

function signingVerifier(secret: string | undefined): Webhook {
  if (!secret?.trim()) throw new UsageError("--secret is required: the endpoint's signing secret (GET /webhooks/endpoints/{id}/secret)", 'listen')
  if (!SECRET.test(secret.trim())) throw new UsageError('--secret must be a signing secret, whsec_ and base64, as Herald gives', 'listen')
  return new Webhook(secret.trim())
}

function listenPort(text: string | undefined): number {
  if (text === undefined) return DEFAULT_PORT
  const port = Number(text)
  if (!/^\d+$/.test(text) || port < 1 || port > 65535) throw new UsageError(`--port must be an integer from 1 to 65535 (got "${text}")`, 'listen')
  return port
}
