import { type Server, createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { REDIRECT_URI } from './sign-in.js'

/** What the document server answers at a path; `count` is how many times it was asked. */
interface Served {
  status: number
  headers: Record<string, string>
  body: string
  count: number
}

/** A client's web server, serving its metadata documents on 127.0.0.1 (reachable under the test outbound policy). */
export class DocumentServer {
  readonly #served = new Map<string, Served>()
  #server: Server | undefined
  origin = ''

  async start(): Promise<void> {
    this.#server = createServer((request, response) => {
      const served = this.#served.get(request.url ?? '')
      if (!served) return response.writeHead(404).end()
      served.count++
      response.writeHead(served.status, served.headers).end(served.body)
    })
    await new Promise<void>((resolve) => this.#server!.listen(0, '127.0.0.1', resolve))
    this.origin = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`
  }

  async stop(): Promise<void> {
    await new Promise((resolve) => this.#server?.close(resolve))
  }

  /** Serves `document` (JSON unless a string) at `path`, answering its URL, the client_id. */
  serve(path: string, document: unknown, init: { status?: number; headers?: Record<string, string> } = {}): string {
    const body = typeof document === 'string' ? document : JSON.stringify(document)
    this.#served.set(path, { status: init.status ?? 200, headers: { 'content-type': 'application/json', ...init.headers }, body, count: 0 })
    return this.url(path)
  }

  url(path: string): string {
    return `${this.origin}${path}`
  }

  fetches(path: string): number {
    return this.#served.get(path)?.count ?? 0
  }
}

/** A valid document for the client at `url`: a public client that may refresh, with what a consent page shows. */
export function documentFor(url: string, extra: Record<string, unknown> = {}) {
  return {
    client_id: url,
    client_name: 'Notes',
    client_uri: 'https://notes.example',
    logo_uri: 'https://notes.example/logo.png',
    redirect_uris: [REDIRECT_URI],
    grant_types: ['authorization_code', 'refresh_token'],
    token_endpoint_auth_method: 'none',
    ...extra,
  }
}
