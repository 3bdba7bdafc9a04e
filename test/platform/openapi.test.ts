import { describe, expect, it } from 'vitest'
import { forEachDialect, useHerald } from '../support/herald.js'
import { call } from '../support/http.js'

interface OpenApiDocument {
  openapi: string
  paths: Record<string, Record<string, { security?: Array<Record<string, string[]>>; requestBody?: { content: Record<string, unknown> } }>>
}

forEachDialect((dialect) => {
  const h = useHerald(dialect)

  describe('GET /openapi.json', () => {
    it('describes the whole API as OpenAPI 3.1, generated from the route schemas', async () => {
      const response = await call<OpenApiDocument>(`${h.current.origin}/openapi.json`, 'GET')
      expect(response.status).toBe(200)
      const { openapi, paths } = response.body
      expect(openapi).toBe('3.1.0')
      for (const path of [
        '/accounts',
        '/accounts/{accountId}',
        '/accounts/{accountId}/oauth/tokens',
        '/accounts/{accountId}/oauth/clients',
        '/accounts/{accountId}/oauth/scopes',
        '/accounts/{accountId}/settings',
        '/accounts/{accountId}/keys/rotate',
        '/accounts/{accountId}/.well-known/jwks.json',
        '/.well-known/oauth-authorization-server/accounts/{accountId}',
        '/healthz',
        '/readyz',
      ]) {
        expect(paths, path).toHaveProperty([path])
      }
      expect(paths['/accounts/{accountId}/keys/rotate']?.post?.security).toEqual([{ managementToken: ['herald:keys:write'] }])
      expect(paths['/accounts/{accountId}/oauth/tokens']?.post?.security).toBeUndefined()
      expect(Object.keys(paths['/accounts/{accountId}/oauth/tokens']?.post?.requestBody?.content ?? {})).toEqual(['application/x-www-form-urlencoded'])
    })
  })
})
