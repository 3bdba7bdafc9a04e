import type { Dispatcher } from 'undici'
import { type HttpHeaders, guardedRequest } from '../../platform/outbound/fetch.js'
import { classifyNetworkError } from '../../platform/outbound/guarded-agent.js'
import { ClientDocumentError } from './client-document-error.js'

/** The draft's advice (§6.3 of -00, "Server Side Request Forgery"): a short deadline and a small document. */
export const DOCUMENT_TIMEOUT_MS = 5000
export const DOCUMENT_MAX_BYTES = 5 * 1024

export interface FetchedDocument {
  text: string
  headers: HttpHeaders
}

/**
 * GETs a metadata document through the SSRF-guarded agent: no redirects (a 3xx is refused, as the draft advises),
 * DOCUMENT_TIMEOUT_MS for the whole exchange, DOCUMENT_MAX_BYTES at most. Anything but a complete 200 is a
 * ClientDocumentError that says what went wrong.
 */
export async function fetchClientDocument(agent: Dispatcher, url: string): Promise<FetchedDocument> {
  let response
  try {
    response = await guardedRequest(agent, { url, headers: { accept: 'application/json' }, timeoutMs: DOCUMENT_TIMEOUT_MS, maxResponseBytes: DOCUMENT_MAX_BYTES })
  } catch (error) {
    throw new ClientDocumentError(`could not be fetched (${classifyNetworkError(error).replace(/_/g, ' ')})`)
  }
  if (response.status >= 300 && response.status < 400) throw new ClientDocumentError(`answered with a redirect (${response.status}), which Herald does not follow`)
  if (response.status !== 200) throw new ClientDocumentError(`answered ${response.status}, not 200`)
  if (response.truncated) throw new ClientDocumentError(`is larger than ${DOCUMENT_MAX_BYTES / 1024} KiB`)
  return { text: response.bodyExcerpt, headers: response.headers }
}
