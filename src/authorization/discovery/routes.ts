import { Type } from 'typebox'
import { problemResponses } from '../../platform/http/schemas.js'
import type { App } from '../../platform/http/types.js'
import type { SettingsStore } from '../../platform/settings/settings.js'
import { serverMetadata } from './metadata.js'

const MetadataSchema = Type.Object({}, { additionalProperties: true, description: 'The metadata document (RFC 8414 §2, OpenID Connect Discovery 1.0 §3)' })

/** Metadata changes only with a deployment; clients may cache it for a while. */
const CACHE_CONTROL = 'public, max-age=300'

/** Serves the account's metadata document at `path`, inside an account-scoped context. */
export function metadataRoute(app: App, path: string, settings: SettingsStore): void {
  app.get(
    path,
    { schema: { summary: 'Authorization server metadata (RFC 8414, OpenID Connect Discovery)', response: { 200: MetadataSchema, ...problemResponses } } },
    async (request, reply) => {
      const account = await settings.get(request.account.id)
      const metadata = serverMetadata(request.issuer, {
        requirePar: account?.require_par ?? false,
        clientIdMetadataDocuments: account?.client_id_metadata_documents ?? false,
        registration: (account?.registration ?? 'disabled') !== 'disabled',
      })
      return reply.header('cache-control', CACHE_CONTROL).send(metadata)
    },
  )
}

/** The discovery documents under the account's base URL; RFC 8414's own location is wired by the server. */
export function discoveryRoutes(app: App, settings: SettingsStore): void {
  metadataRoute(app, '/.well-known/openid-configuration', settings)
  metadataRoute(app, '/.well-known/oauth-authorization-server', settings)
}
