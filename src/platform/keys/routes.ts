import { Type } from 'typebox'
import type { App } from '../http/types.js'
import { transaction } from '../storage/transaction.js'
import type { Kysely } from 'kysely'
import type { Clock } from '../clock.js'
import type { DB } from '../storage/schema.js'
import { longestSignedTokenLifetime, type SettingsStore } from '../settings/settings.js'
import type { KeyStore } from './key-store.js'
import { JWKS_MAX_AGE_SECONDS } from './policy.js'
import { named, problemResponses, ref } from '../http/schemas.js'

export interface KeyRouteDeps {
  db: Kysely<DB>
  keys: KeyStore
  settings: SettingsStore
  clock: Clock
}

const KeySchema = named(
  'Key',
  Type.Object(
    {
      kid: Type.String(),
      alg: Type.Enum(['ES256', 'RS256']),
      status: Type.Enum(['upcoming', 'signing', 'retiring', 'retired', 'revoked']),
      created_at: Type.String({ format: 'date-time' }),
      signs_from: Type.String({ format: 'date-time' }),
      retires_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
      published_until: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
      revoked_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    },
    { description: 'A signing key of the account and its lifecycle' },
  ),
)
export const keySchemas = [KeySchema]
const KeyList = (description: string) => Type.Object({ data: Type.Array(ref(KeySchema)) }, { description })

const JwkSchema = Type.Object({}, { additionalProperties: true })

export function keyRoutes(app: App, deps: KeyRouteDeps): void {
  /** How long a superseded key must stay published, under the account's current settings. */
  const longestTokenSeconds = async (accountId: string): Promise<number> => {
    const settings = await deps.settings.get(accountId)
    return settings ? longestSignedTokenLifetime(settings) : 0
  }

  app.get(
    '/.well-known/jwks.json',
    { schema: { summary: "The account's public signing keys (RFC 7517)", response: { 200: Type.Object({ keys: Type.Array(JwkSchema) }, { description: 'The JWK set (RFC 7517 §5)' }), ...problemResponses } } },
    async (request, reply) => {
      const keys = await deps.keys.keysOf(request.account.id)
      const published = keys?.published(deps.clock.now()) ?? []
      return reply
        .header('cache-control', `public, max-age=${JWKS_MAX_AGE_SECONDS}`)
        .send({ keys: await Promise.all(published.map((key) => key.publicJwk())) })
    },
  )

  app.get(
    '/keys',
    {
      config: { scope: 'herald:keys:write' },
      schema: { summary: "Lists the account's signing keys and their lifecycle", response: { 200: KeyList("The account's keys"), ...problemResponses } },
    },
    async (request) => ({ data: await deps.keys.list(request.account.id) }),
  )

  app.post(
    '/keys/rotate',
    {
      config: { scope: 'herald:keys:write' },
      schema: {
        summary: 'Rotates the signing keys: the new ones are published now and sign once cached JWKS have expired',
        response: { 200: KeyList("The account's keys after the rotation"), ...problemResponses },
      },
    },
    async (request) => {
      const longest = await longestTokenSeconds(request.account.id)
      const fresh = await deps.keys.generate()
      return { data: await transaction(deps.db, (tx) => deps.keys.rotate(tx, request.account.id, longest, fresh)) }
    },
  )

  app.post(
    '/keys/:kid/revoke',
    {
      config: { scope: 'herald:keys:write' },
      schema: {
        summary: 'Revokes a key at once (a compromised key): it leaves the JWKS and signs nothing more',
        params: Type.Object({ accountId: Type.String(), kid: Type.String({ maxLength: 64 }) }),
        response: { 200: ref(KeySchema, 'The revoked key'), ...problemResponses },
      },
    },
    async (request) => {
      const longest = await longestTokenSeconds(request.account.id)
      return transaction(deps.db, (tx) => deps.keys.revoke(tx, request.account.id, request.params.kid, longest))
    },
  )
}
