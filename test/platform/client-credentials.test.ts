import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose'
import * as oidc from 'openid-client'
import { describe, expect, it } from 'vitest'
import { DEFAULT_SETTINGS } from '../../src/platform/settings/settings.js'
import { MANAGEMENT_SCOPES } from '../../src/platform/management-auth/scopes.js'
import { forEachDialect, useHerald } from '../support/herald.js'
import { basicAuth, call, createAccount } from '../support/http.js'

forEachDialect((dialect) => {
  const h = useHerald(dialect)

  describe('an account, discovered and used with openid-client', () => {
    it('issues the management client an RFC 9068 access token that verifies against the account JWKS', async () => {
      const account = await createAccount(h.current)
      const config = await oidc.discovery(new URL(account.issuer), account.clientId, undefined, oidc.ClientSecretBasic(account.clientSecret), {
        execute: [oidc.allowInsecureRequests],
      })
      expect(config.serverMetadata().issuer).toBe(account.issuer)

      const tokens = await oidc.clientCredentialsGrant(config)
      expect(tokens.token_type).toBe('bearer')
      expect(tokens.expires_in).toBe(DEFAULT_SETTINGS.access_token_ttl)
      expect(tokens.scope?.split(' ').sort()).toEqual([...MANAGEMENT_SCOPES].sort())

      const jwks = createRemoteJWKSet(new URL(config.serverMetadata().jwks_uri as string))
      const { payload, protectedHeader } = await jwtVerify(tokens.access_token, jwks, {
        issuer: account.issuer,
        audience: account.issuer,
        typ: 'at+jwt',
        currentDate: new Date(h.current.clock.now()),
      })
      expect(protectedHeader.alg).toBe('ES256')
      expect(payload.exp! - payload.iat!).toBe(DEFAULT_SETTINGS.access_token_ttl)
      expect(payload.client_id).toBe(account.clientId)
      expect(payload.sub).toBe(account.clientId)
      expect(typeof payload.jti).toBe('string')
    })

    it('accepts the token on the management API and answers Cache-Control: no-store', async () => {
      const account = await createAccount(h.current)
      const response = await call<{ access_token: string }>(`${account.base}/oauth/tokens`, 'POST', {
        headers: { authorization: basicAuth(account.clientId, account.clientSecret) },
        form: { grant_type: 'client_credentials', scope: 'herald:keys:write' },
      })
      expect(response.status).toBe(200)
      expect(response.headers.get('cache-control')).toBe('no-store')
      expect(response.body).toMatchObject({ token_type: 'Bearer', scope: 'herald:keys:write' })

      const keys = await call<{ data: Array<{ alg: string; status: string }> }>(`${account.base}/keys`, 'GET', { token: response.body.access_token })
      expect(keys.status).toBe(200)
      expect(keys.body.data.map((key) => `${key.alg}:${key.status}`).sort()).toEqual(['ES256:signing', 'RS256:signing'])
      expect(decodeProtectedHeader(response.body.access_token).kid).toBeDefined()
    })

    it('serves RFC 8414 metadata at the inserted well-known path and at the issuer alias, identically', async () => {
      const account = await createAccount(h.current)
      const inserted = await call(`${h.current.origin}/.well-known/oauth-authorization-server/accounts/${account.id}`, 'GET')
      const alias = await call(`${account.issuer}/.well-known/oauth-authorization-server`, 'GET')
      expect(inserted.status).toBe(200)
      expect(inserted.body).toEqual(alias.body)
      expect(inserted.body).toMatchObject({ issuer: account.issuer, token_endpoint: `${account.issuer}/oauth/tokens` })
      expect(inserted.body).toMatchObject({ authorization_endpoint: `${account.issuer}/oauth/authorize`, response_types_supported: ['code'] })
    })

    it('refuses a scope the client may not request, naming it', async () => {
      const account = await createAccount(h.current)
      const response = await call(`${account.base}/oauth/tokens`, 'POST', {
        headers: { authorization: basicAuth(account.clientId, account.clientSecret) },
        form: { grant_type: 'client_credentials', scope: 'herald:keys:write orders:read' },
      })
      expect(response.status).toBe(400)
      expect(response.body).toMatchObject({ error: 'invalid_scope' })
      expect(String(response.body.error_description)).toContain('orders:read')
    })
  })
})
