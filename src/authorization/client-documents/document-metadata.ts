import { Type } from 'typebox'
import { Value } from 'typebox/value'
import { type ClientMetadata, ClientMetadataFields, DEFAULT_METADATA, type MetadataPolicy, metadataProblems } from '../clients/client-metadata.js'
import { OIDC_SCOPES } from '../scopes/scope-store.js'
import { ClientDocumentError } from './client-document-error.js'

/**
 * The RFC 7591 §2 fields Herald reads from a metadata document. Herald's own extensions (skip_consent, audience,
 * lifetimes, CORS origins, require_pkce, back-channel logout) are an account's decisions, never a document's: they
 * keep their defaults. Other members are ignored (RFC 7591 §2).
 */
const DocumentSchema = Type.Object(
  {
    client_id: Type.String(),
    client_name: Type.Optional(ClientMetadataFields.client_name),
    redirect_uris: Type.Optional(ClientMetadataFields.redirect_uris),
    post_logout_redirect_uris: Type.Optional(ClientMetadataFields.post_logout_redirect_uris),
    grant_types: Type.Optional(Type.Array(Type.String({ maxLength: 100 }), { minItems: 1, maxItems: 10, uniqueItems: true })),
    response_types: Type.Optional(ClientMetadataFields.response_types),
    token_endpoint_auth_method: Type.Optional(Type.String({ maxLength: 100 })),
    scope: Type.Optional(ClientMetadataFields.scope),
    application_type: Type.Optional(ClientMetadataFields.application_type),
    jwks_uri: Type.Optional(Type.String({ minLength: 1, maxLength: 2048 })),
    contacts: Type.Optional(ClientMetadataFields.contacts),
    client_uri: Type.Optional(Type.String({ minLength: 1, maxLength: 2048 })),
    logo_uri: Type.Optional(Type.String({ minLength: 1, maxLength: 2048 })),
    policy_uri: Type.Optional(Type.String({ minLength: 1, maxLength: 2048 })),
    tos_uri: Type.Optional(Type.String({ minLength: 1, maxLength: 2048 })),
  },
  { additionalProperties: true },
)

/** §4.1: a document names no shared secret; Herald also knows no client_secret_jwt. */
const DOCUMENT_AUTH_METHODS = ['none', 'private_key_jwt'] as const
/** A document's client signs users in: no client_credentials, which would be an anonymous machine client. */
const DOCUMENT_GRANT_TYPES = ['authorization_code', 'refresh_token'] as const
const SECRET_FIELDS = ['client_secret', 'client_secret_expires_at'] as const

/**
 * The metadata of the client `clientId` names, from its document's text, or a ClientDocumentError that says why it is
 * refused (§4.1): the document's client_id must be the URL itself, it must name no secret, authenticate with `none`
 * or `private_key_jwt` and a `jwks_uri`, and pass the checks every client passes (metadataProblems), scopes included.
 * A document without `scope` may ask for the OpenID Connect scopes, which every account has.
 */
export function documentMetadata(clientId: string, text: string, knownScopes: ReadonlySet<string>, policy: MetadataPolicy): ClientMetadata {
  let document: unknown
  try {
    document = JSON.parse(text)
  } catch {
    throw new ClientDocumentError('is not JSON')
  }
  if (typeof document !== 'object' || document === null || Array.isArray(document)) throw new ClientDocumentError('is not a JSON object')
  const named = SECRET_FIELDS.filter((field) => Object.hasOwn(document, field))
  if (named.length > 0) throw new ClientDocumentError(`must not contain ${named.join(' or ')} (a metadata document is public)`)
  if (!Value.Check(DocumentSchema, document)) {
    const [first] = Value.Errors(DocumentSchema, document)
    throw new ClientDocumentError(`is not valid client metadata: ${first ? `${first.instancePath || '/'} ${first.message}` : 'wrong shape'}`)
  }
  if (document.client_id !== clientId) throw new ClientDocumentError('has a client_id that is not its own URL')
  const method = document.token_endpoint_auth_method ?? 'none'
  if (!isOneOf(DOCUMENT_AUTH_METHODS, method)) throw new ClientDocumentError(`token_endpoint_auth_method must be none or private_key_jwt, not ${method}`)
  const grantTypes = document.grant_types ?? ['authorization_code']
  const refused = grantTypes.filter((grant) => !isOneOf(DOCUMENT_GRANT_TYPES, grant))
  if (refused.length > 0) throw new ClientDocumentError(`grant_types may hold only authorization_code and refresh_token, not ${refused.join(', ')}`)
  if (method === 'private_key_jwt' && document.jwks_uri === undefined) throw new ClientDocumentError('private_key_jwt needs a jwks_uri')

  const metadata: ClientMetadata = {
    ...DEFAULT_METADATA,
    client_name: document.client_name ?? '',
    redirect_uris: document.redirect_uris ?? [],
    post_logout_redirect_uris: document.post_logout_redirect_uris ?? [],
    grant_types: grantTypes.filter((grant) => isOneOf(DOCUMENT_GRANT_TYPES, grant)),
    response_types: document.response_types ?? ['code'],
    token_endpoint_auth_method: method,
    scope: document.scope ?? OIDC_SCOPES.map((scope) => scope.name).join(' '),
    application_type: document.application_type ?? 'web',
    jwks_uri: document.jwks_uri ?? null,
    contacts: document.contacts ?? [],
    client_uri: document.client_uri ?? null,
    logo_uri: document.logo_uri ?? null,
    policy_uri: document.policy_uri ?? null,
    tos_uri: document.tos_uri ?? null,
  }
  const problems = metadataProblems(metadata, knownScopes, policy)
  if (problems.length > 0) {
    throw new ClientDocumentError(`is not valid client metadata: ${problems.map((p) => `${p.pointer.slice('/body/'.length)} ${p.message}`).join('; ')}`)
  }
  return metadata
}

function isOneOf<T extends string>(values: readonly T[], value: string): value is T {
  return (values as readonly string[]).includes(value)
}
