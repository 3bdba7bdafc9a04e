// One bounded outbound HTTP exchange through the guarded agent: no redirects, a total deadline, and only
// the first bytes of the response kept, for recording on a delivery attempt or parsing a small document.
import type { IncomingHttpHeaders } from 'node:http'
import { performance } from 'node:perf_hooks'
import type { Dispatcher } from 'undici'

export type HttpHeaders = Record<string, string | string[] | undefined>

export interface GuardedRequestOptions {
  url: string | URL
  method?: Dispatcher.HttpMethod
  headers?: Readonly<Record<string, string>>
  body?: string | Uint8Array
  /** Deadline for the whole exchange: resolution, connection, headers and body. */
  timeoutMs: number
  /** Bytes of response body kept; the rest is not read and the connection is dropped. */
  maxResponseBytes: number
  /** Aborts early, e.g. on shutdown. */
  signal?: AbortSignal
  now?: () => number
}

export interface GuardedResponse {
  status: number
  headers: HttpHeaders
  /** The first `maxResponseBytes` bytes of the body decoded as UTF-8 (a character cut at the limit is dropped). */
  bodyExcerpt: string
  truncated: boolean
  durationMs: number
}

/**
 * Rejects with the underlying undici/Node error (a `BlockedAddressError` when the guard refused), so
 * callers classify it with `classifyNetworkError`; a deadline that passes rejects with a `TimeoutError`.
 *
 * Redirects are never followed: undici 7 only follows them when a redirect interceptor is composed into
 * the dispatcher, and a 3xx is reported as is (a failure for webhooks).
 */
export async function guardedRequest(agent: Dispatcher, options: GuardedRequestOptions): Promise<GuardedResponse> {
  const url = typeof options.url === 'string' ? new URL(options.url) : options.url
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new Error(`Refusing to request ${url.protocol} URL: only http: and https: are allowed`)
  }
  return new Promise((resolve, reject) => {
    const exchange = new BoundedExchange(options, resolve, reject)
    agent.dispatch({ origin: url.origin, path: url.pathname + url.search, method: options.method ?? 'GET', headers: options.headers, body: options.body }, exchange)
  })
}

/**
 * undici's dispatch handler for one exchange. It is the delivery loop's hot path, so it avoids what
 * `undici.request` adds per request: a body stream read through an async iterator, and an AbortSignal with
 * its listeners for the deadline (a plain timer does the same job here).
 */
class BoundedExchange implements Dispatcher.DispatchHandler {
  readonly #startedAt: number
  readonly #timer: NodeJS.Timeout
  #controller: Dispatcher.DispatchController | undefined
  /** Why the exchange ended early (deadline, caller's signal); the connection is aborted with it. */
  #abortedWith: Error | undefined
  #settled = false
  #status = 0
  #headers: IncomingHttpHeaders = {}
  readonly #chunks: Buffer[] = []
  #length = 0

  constructor(
    private readonly options: GuardedRequestOptions,
    private readonly resolve: (response: GuardedResponse) => void,
    private readonly reject: (error: unknown) => void,
  ) {
    this.#startedAt = this.#now()
    this.#timer = setTimeout(() => this.#abort(new DOMException(`No complete response within ${options.timeoutMs} ms`, 'TimeoutError')), options.timeoutMs)
    const { signal } = options
    if (signal?.aborted) this.#abort(abortReason(signal))
    else signal?.addEventListener('abort', this.#onSignal, { once: true })
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#controller = controller
    // Ended while waiting for a connection: the request must not go out.
    if (this.#abortedWith) controller.abort(this.#abortedWith)
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    // 1xx interim responses come before the real one.
    if (statusCode < 200) return
    this.#status = statusCode
    this.#headers = headers
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    const room = this.options.maxResponseBytes - this.#length
    if (chunk.length <= room) {
      this.#chunks.push(chunk)
      this.#length += chunk.length
      return
    }
    this.#chunks.push(chunk.subarray(0, room))
    this.#length += room
    this.#succeed(true)
    // The rest is never read, and the connection is not reused.
    controller.abort(new Error('response excerpt complete'))
  }

  onResponseEnd(): void {
    this.#succeed(false)
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    this.#fail(error)
  }

  readonly #onSignal = (): void => {
    if (this.options.signal) this.#abort(abortReason(this.options.signal))
  }

  #abort(reason: Error): void {
    if (this.#settled) return
    this.#abortedWith = reason
    this.#fail(reason)
    this.#controller?.abort(reason)
  }

  #succeed(truncated: boolean): void {
    if (!this.#end()) return
    const bytes = Buffer.concat(this.#chunks, this.#length)
    this.resolve({
      status: this.#status,
      headers: this.#headers,
      // In streaming mode the decoder holds back an incomplete trailing character instead of emitting U+FFFD.
      bodyExcerpt: truncated ? new TextDecoder().decode(bytes, { stream: true }) : bytes.toString('utf8'),
      truncated,
      durationMs: this.#now() - this.#startedAt,
    })
  }

  #fail(error: unknown): void {
    if (this.#end()) this.reject(error)
  }

  /** Marks the exchange settled; false when it already was. */
  #end(): boolean {
    if (this.#settled) return false
    this.#settled = true
    clearTimeout(this.#timer)
    this.options.signal?.removeEventListener('abort', this.#onSignal)
    return true
  }

  #now(): number {
    return this.options.now ? this.options.now() : performance.now()
  }
}

function abortReason(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new DOMException('This operation was aborted', 'AbortError')
}
