import type { Kysely } from 'kysely'
import { type Clock, toRfc3339 } from '../../platform/clock.js'
import type { Outbox } from '../../platform/events/outbox.js'
import { type FieldError, ProblemError, notFound } from '../../platform/http/problems.js'
import { newId } from '../../platform/ids.js'
import { type OutboundUrlPolicy, outboundUrlProblem } from '../../platform/outbound/url-policy.js'
import { MANAGEMENT_SCOPES } from '../../platform/management-auth/scopes.js'
import { decodeCursor, type Page, toPage } from '../../platform/pagination.js'
import type { ClientSource, DB } from '../../platform/storage/schema.js'
import { retryingDeadlocks, type Tx, transaction } from '../../platform/storage/transaction.js'
import { listScopeNames } from '../scopes/scope-store.js'
import type { BackchannelLogoutEndpoints } from '../logout/backchannel.js'
import { type ClientMetadata, DEFAULT_METADATA, OUTBOUND_URI_FIELDS, metadataProblems, scopesOf, usesSecret } from './client-metadata.js'
import type { ClientStore, RegisteredClient } from './client-store.js'
import { checkScopeCeiling } from './scope-ceiling.js'
import { hashClientSecret, newClientSecret } from './secrets.js'

/** A client as the management API shows it (RFC 7591 §3.2.1), without its secret. */
export type ClientView = ClientMetadata & {
  client_id: string
  client_id_issued_at: number
  management: boolean
  source: ClientSource
  created_at: string
  updated_at: string
}

/** Returned once, when a secret is made: at registration or rotation. */
export type ClientWithSecret = ClientView & { client_secret?: string; client_secret_expires_at?: 0 }

/**
 * Registering, changing, rotating and deleting clients. Every change is one transaction with its event, and
 * is validated as a whole: the merged metadata must make sense, and every scope must exist in the account.
 * `held` is the caller's management scopes (ManagementPrincipal): each change keeps to that ceiling (scope-ceiling.ts).
 */
export class Clients {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly store: ClientStore,
    private readonly clock: Clock,
    private readonly outbox: Outbox,
    private readonly urlPolicy: OutboundUrlPolicy,
    private readonly logoutEndpoints: BackchannelLogoutEndpoints,
  ) {}

  async create(accountId: string, input: Partial<ClientMetadata>, held: ReadonlySet<string>): Promise<ClientWithSecret> {
    const unsafeUrls = await this.outboundUrlProblems(input)
    return transaction(this.db, async (tx) => {
      const metadata = await this.validated(tx, accountId, { ...DEFAULT_METADATA, ...input }, unsafeUrls)
      checkScopeCeiling(held, scopesOf(metadata))
      const client = await this.insert(tx, accountId, metadata, 'management')
      await this.outbox.record(tx, accountId, 'oauth.client.created', withoutSecret(client), this.clock.now())
      return client
    })
  }

  /**
   * Inserts a client of validated metadata inside the caller's transaction, with a secret if its authentication
   * method uses one; the caller records the event. Registration (RFC 7591) makes its clients here too.
   */
  async insert(tx: Tx, accountId: string, metadata: ClientMetadata, source: ClientSource): Promise<ClientWithSecret> {
    const secret = usesSecret(metadata.token_endpoint_auth_method) ? newClientSecret() : undefined
    const client = await this.store.insert(tx, accountId, newId('cli', this.clock.now()), metadata, secret === undefined ? null : hashClientSecret(secret), source)
    if (metadata.backchannel_logout_uri !== null) await this.logoutEndpoints.sync(tx, accountId, client.id, metadata.backchannel_logout_uri)
    return withSecret(toView(client), secret)
  }

  async get(accountId: string, clientId: string): Promise<ClientView> {
    return toView(await this.#existing(this.db, accountId, clientId))
  }

  async list(accountId: string, limit: number, cursor: string | undefined): Promise<Page<ClientView>> {
    const clients = await this.store.list(accountId, limit + 1, decodeCursor(cursor))
    return toPage(clients, limit, (client) => client.id, toView)
  }

  /**
   * Merges `changes` into the client's metadata. A change to a secret-based authentication method issues a
   * secret if the client had none; leaving secrets behind removes the old one.
   */
  async update(accountId: string, clientId: string, changes: Partial<ClientMetadata>, held: ReadonlySet<string>): Promise<ClientWithSecret> {
    const unsafeUrls = await this.outboundUrlProblems(changes)
    // Its logout endpoint may be deleted here, which can deadlock with a delivery's completion (see Endpoints.delete).
    return retryingDeadlocks(() => this.#update(accountId, clientId, changes, held, unsafeUrls))
  }

  async #update(accountId: string, clientId: string, changes: Partial<ClientMetadata>, held: ReadonlySet<string>, unsafeUrls: readonly FieldError[]): Promise<ClientWithSecret> {
    return transaction(this.db, async (tx) => {
      const client = await this.#existing(tx.db, accountId, clientId, true)
      // Its document is the client's metadata: a change here would be undone at its next fetch.
      if (client.source === 'metadata_document') throw new ProblemError('conflict', 'This client comes from its Client ID Metadata Document: change the document')
      const metadata = await this.validated(tx, accountId, { ...client.metadata, ...changes }, unsafeUrls)
      checkScopeCeiling(held, [...client.scopes, ...scopesOf(metadata)])
      if (await this.#isAdminClient(tx, accountId, clientId) && changesAccess(client.metadata, metadata)) {
        throw new ProblemError('conflict', "The scopes, grant types and authentication method of the account's original management client are fixed")
      }
      return this.replace(tx, client, metadata)
    })
  }

  /**
   * Gives `client` (read for change) validated metadata inside the caller's transaction, with its event. A change to
   * a secret-based authentication method issues a secret if the client had none; leaving secrets behind removes it.
   */
  async replace(tx: Tx, client: RegisteredClient, metadata: ClientMetadata): Promise<ClientWithSecret> {
    let secret: string | undefined
    let secretHash = client.secretHash
    if (!usesSecret(metadata.token_endpoint_auth_method)) secretHash = null
    else if (secretHash === null) {
      secret = newClientSecret()
      secretHash = hashClientSecret(secret)
    }
    const view = toView(await this.store.update(tx, client, metadata, secretHash))
    await this.logoutEndpoints.sync(tx, client.accountId, client.id, metadata.backchannel_logout_uri)
    await this.outbox.record(tx, client.accountId, 'oauth.client.updated', view, this.clock.now())
    return withSecret(view, secret)
  }

  /** A new secret at once; the old one stops working at the same moment, and so do tokens issued under it. */
  async rotateSecret(accountId: string, clientId: string, held: ReadonlySet<string>): Promise<ClientWithSecret> {
    return transaction(this.db, async (tx) => {
      const client = await this.#existing(tx.db, accountId, clientId, true)
      checkScopeCeiling(held, client.scopes)
      if (!usesSecret(client.tokenEndpointAuthMethod)) {
        throw new ProblemError('conflict', `This client authenticates with ${client.tokenEndpointAuthMethod}, not a secret`)
      }
      const secret = newClientSecret()
      await this.store.replaceSecret(tx, accountId, clientId, hashClientSecret(secret))
      const view = toView(await this.#existing(tx.db, accountId, clientId))
      await this.outbox.record(tx, accountId, 'oauth.client.secret_rotated', { client_id: clientId }, this.clock.now())
      return withSecret(view, secret)
    })
  }

  async delete(accountId: string, clientId: string, held: ReadonlySet<string>): Promise<void> {
    await retryingDeadlocks(() => this.#delete(accountId, clientId, held))
  }

  async #delete(accountId: string, clientId: string, held: ReadonlySet<string>): Promise<void> {
    await transaction(this.db, async (tx) => {
      const client = await this.#existing(tx.db, accountId, clientId, true)
      checkScopeCeiling(held, client.scopes)
      if (await this.#isAdminClient(tx, accountId, clientId)) {
        throw new ProblemError('conflict', "The account's original management client can't be deleted; reset its secret instead")
      }
      await this.remove(tx, client)
    })
  }

  /** Deletes `client` (read for change) inside the caller's transaction, with its event. */
  async remove(tx: Tx, client: RegisteredClient): Promise<void> {
    // Its logout endpoint goes with it, cancelling the logout tokens it had not received.
    await this.logoutEndpoints.sync(tx, client.accountId, client.id, null)
    await this.store.delete(tx, client.accountId, client.id)
    await this.outbox.record(tx, client.accountId, 'oauth.client.deleted', { client_id: client.id, client_name: client.metadata.client_name }, this.clock.now())
  }

  async #existing(db: Kysely<DB>, accountId: string, clientId: string, forChange = false): Promise<RegisteredClient> {
    const client = await this.store.read(db, accountId, clientId, forChange)
    if (!client) throw notFound(`Client ${clientId}`)
    return client
  }

  /** `unsafeUrls` are what outboundUrlProblem found, each added unless the metadata's own checks refuse that URL already. */
  async validated(tx: Tx, accountId: string, metadata: ClientMetadata, unsafeUrls: readonly FieldError[]): Promise<ClientMetadata> {
    const known = new Set<string>([...(await listScopeNames(tx.db, accountId)), ...MANAGEMENT_SCOPES])
    const problems = metadataProblems(metadata, known, { allowHttpOutbound: this.urlPolicy.allowHttp })
    for (const unsafe of unsafeUrls) if (!problems.some((problem) => problem.pointer === unsafe.pointer)) problems.push(unsafe)
    if (problems.length > 0) {
      throw new ProblemError('validation_failed', problems.map((p) => `${p.pointer.slice('/body/'.length)} ${p.message}`).join('; '), problems)
    }
    return metadata
  }

  /**
   * The URLs Herald will call (`jwks_uri`, `backchannel_logout_uri`) are vetted like a webhook URL: one naming a
   * private, loopback or metadata address is refused now, not only when Herald calls it. Outside the transaction,
   * since a name may take seconds to resolve.
   */
  async outboundUrlProblems(metadata: Partial<ClientMetadata>): Promise<FieldError[]> {
    const problems: FieldError[] = []
    for (const field of OUTBOUND_URI_FIELDS) {
      const uri = metadata[field]
      if (typeof uri !== 'string') continue
      const reason = await outboundUrlProblem(uri, this.urlPolicy)
      if (reason !== undefined) problems.push({ pointer: `/body/${field}`, message: reason })
    }
    return problems
  }

  /** The account's original management client is the way back in: it can't be deleted or lose its access. */
  async #isAdminClient(tx: Tx, accountId: string, clientId: string): Promise<boolean> {
    const row = await tx.db.selectFrom('accounts').select('admin_client_id').where('id', '=', accountId).executeTakeFirst()
    return row?.admin_client_id === clientId
  }
}

export function toView(client: RegisteredClient): ClientView {
  return {
    client_id: client.id,
    ...client.metadata,
    client_id_issued_at: Math.floor(client.createdAt / 1000),
    management: client.kind === 'management',
    source: client.source,
    created_at: toRfc3339(client.createdAt),
    updated_at: toRfc3339(client.updatedAt),
  }
}

function changesAccess(before: ClientMetadata, after: ClientMetadata): boolean {
  return (
    before.scope !== after.scope ||
    before.token_endpoint_auth_method !== after.token_endpoint_auth_method ||
    JSON.stringify(before.grant_types) !== JSON.stringify(after.grant_types)
  )
}

function withSecret(view: ClientView, secret: string | undefined): ClientWithSecret {
  return secret === undefined ? view : { ...view, client_secret: secret, client_secret_expires_at: 0 }
}

/** What an event may carry: never the secret. */
export function withoutSecret(client: ClientWithSecret): ClientView {
  const { client_secret: _secret, client_secret_expires_at: _expires, ...view } = client
  return view
}
