import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface ReceivedRequest {
  headers: IncomingHttpHeaders
  body: string
  path: string
  /** Wall-clock time it arrived (Date.now()). */
  at: number
}

export interface Reply {
  status: number
  headers?: Record<string, string>
  body?: string
  /** Wait this long before answering. */
  delayMs?: number
  /** Answer once this settles. */
  until?: Promise<void>
}

export type Responder = (request: ReceivedRequest) => Reply

/** A webhook receiver on 127.0.0.1 that records every request and answers as its responder says. */
export class Receiver {
  readonly requests: ReceivedRequest[] = []
  respond: Responder = () => ({ status: 204 })
  /** The most requests that were open (arrived, not yet answered) at one time. */
  maxConcurrent = 0
  #open = 0
  readonly #server: Server

  private constructor(server: Server) {
    this.#server = server
  }

  /** `port` 0 picks a free one; a given port brings a closed receiver back where it was. */
  static async start(respond?: Responder, port = 0): Promise<Receiver> {
    const server = createServer()
    const receiver = new Receiver(server)
    if (respond) receiver.respond = respond
    server.on('request', (request, response) => {
      receiver.maxConcurrent = Math.max(receiver.maxConcurrent, ++receiver.#open)
      response.on('close', () => receiver.#open--)
      const chunks: Buffer[] = []
      request.on('data', (chunk: Buffer) => chunks.push(chunk))
      request.on('end', () => {
        const received: ReceivedRequest = { headers: request.headers, body: Buffer.concat(chunks).toString('utf8'), path: request.url ?? '/', at: Date.now() }
        receiver.requests.push(received)
        const reply = receiver.respond(received)
        const send = () => {
          if (response.destroyed) return
          response.writeHead(reply.status, reply.headers)
          response.end(reply.body ?? '')
        }
        if (reply.delayMs) setTimeout(send, reply.delayMs).unref()
        else if (reply.until) void reply.until.finally(send)
        else send()
      })
    })
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve))
    return receiver
  }

  get port(): number {
    return (this.#server.address() as AddressInfo).port
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/hooks`
  }

  /** The `webhook-id`s received, in order. */
  get messageIds(): string[] {
    return this.requests.map((request) => String(request.headers['webhook-id']))
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections()
    await new Promise<void>((resolve) => this.#server.close(() => resolve()))
  }
}

/** Polls `check` until it returns a value other than undefined/false, or fails after `timeoutMs`. */
export async function eventually<T>(check: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs = 10_000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await check()
    if (value !== undefined && value !== false) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}
