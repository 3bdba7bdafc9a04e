// One bounded outbound HTTP exchange through the guarded agent: no redirects, a total deadline, and only
// the first bytes of the response kept, for recording on a delivery attempt or parsing a small document.
import { performance } from 'node:perf_hooks'
import { request, type Dispatcher } from 'undici'

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
 * callers classify it with `classifyNetworkError`.
 *
 * Redirects are never followed: undici 7 only follows them when a redirect interceptor is composed into
 * the dispatcher, and a 3xx is reported as is (a failure for webhooks).
 */
export async function guardedRequest(agent: Dispatcher, options: GuardedRequestOptions): Promise<GuardedResponse> {
  const url = new URL(options.url)
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new Error(`Refusing to request ${url.protocol} URL: only http: and https: are allowed`)
  }
  const now = options.now ?? (() => performance.now())
  const deadline = AbortSignal.timeout(options.timeoutMs)
  const signal = options.signal ? AbortSignal.any([deadline, options.signal]) : deadline

  const startedAt = now()
  const response = await request(url, {
    dispatcher: agent,
    method: options.method ?? 'GET',
    headers: options.headers,
    body: options.body,
    signal,
  })
  const { bytes, truncated } = await readCapped(response.body, options.maxResponseBytes)
  return {
    status: response.statusCode,
    headers: response.headers,
    // In streaming mode the decoder holds back an incomplete trailing character instead of emitting U+FFFD.
    bodyExcerpt: new TextDecoder().decode(bytes, { stream: truncated }),
    truncated,
    durationMs: now() - startedAt,
  }
}

async function readCapped(
  body: AsyncIterable<Uint8Array>,
  maxBytes: number,
): Promise<{ bytes: Uint8Array; truncated: boolean }> {
  const chunks: Uint8Array[] = []
  let length = 0
  let truncated = false
  // Breaking out of the loop destroys the body, so the rest is never read and the socket is not reused.
  for await (const chunk of body) {
    if (length + chunk.length > maxBytes) {
      chunks.push(chunk.subarray(0, maxBytes - length))
      length = maxBytes
      truncated = true
      break
    }
    chunks.push(chunk)
    length += chunk.length
  }
  return { bytes: Buffer.concat(chunks, length), truncated }
}
