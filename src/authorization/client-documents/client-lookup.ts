import { type Awaitable, andThen } from '../../platform/cache/awaitable.js'
import type { SettingsStore } from '../../platform/settings/settings.js'
import type { ClientStore, RegisteredClient } from '../clients/client-store.js'
import type { ClientDocuments } from './client-documents.js'
import { isDocumentClientId } from './client-id-url.js'

/** Finds the client a request names; undefined when there is none, synchronous when the caches hold it. */
export interface ClientFinder {
  find(accountId: string, clientId: string): Awaitable<RegisteredClient | undefined>
}

/**
 * The client that an authorization request, a pushed request or a token request names by its client_id: one of the
 * account's clients, or, when the account turned `client_id_metadata_documents` on, the client of the metadata
 * document at that URL (ClientDocuments), which rejects with a ClientDocumentError when the document can't be used.
 * With the setting off, such a client_id names no client, even one resolved while it was on.
 */
export class ClientLookup implements ClientFinder {
  constructor(
    private readonly store: ClientStore,
    private readonly documents: ClientDocuments,
    private readonly settings: SettingsStore,
  ) {}

  find(accountId: string, clientId: string): Awaitable<RegisteredClient | undefined> {
    if (!isDocumentClientId(clientId)) return this.store.find(accountId, clientId)
    return andThen(this.settings.get(accountId), (settings) => (settings?.client_id_metadata_documents ? this.documents.resolve(accountId, clientId) : undefined))
  }
}
