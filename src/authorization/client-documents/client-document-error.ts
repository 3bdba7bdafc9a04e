/**
 * A client_id URL whose metadata document can't be used: not fetched, too large, redirected, or not valid client
 * metadata. `reason` completes "The client metadata document at {url} …" and is shown to whoever sent the request:
 * authorize answers it on its error page (never at the document's redirect URIs), the token endpoint and PAR as
 * `invalid_client`.
 */
export class ClientDocumentError extends Error {
  constructor(readonly reason: string) {
    super(`The client metadata document ${reason}`)
    this.name = 'ClientDocumentError'
  }
}
