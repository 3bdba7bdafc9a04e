import { beforeAll, describe, expect, it } from 'vitest'
import { type CreatedAccount, forEachDialect, useHerald } from '../support/herald.js'
import { basicAuth, call, createAccount, managementToken } from '../support/http.js'

/** OAuth endpoints never log credentials, wherever a client puts them. */
forEachDialect((dialect) => {
  const h = useHerald(dialect)
  let account: CreatedAccount

  beforeAll(async () => {
    account = await createAccount(h.current, 'redaction')
  })

  /** The "incoming request" lines logged since `from`, as objects. */
  const requestLines = (from: number) =>
    h.current.logs
      .slice(from)
      .map((line) => JSON.parse(line) as { msg: string; req?: { url: string } })
      .filter((line) => line.msg === 'incoming request')

  describe('OAuth requests in the log', () => {
    it('logs the query of a token, introspection or revocation request with its values redacted', async () => {
      const token = await managementToken(account)
      const secrets = {
        client_secret: account.clientSecret,
        code: 'code-0f9e8d7c6b5a',
        refresh_token: 'refresh-1a2b3c4d5e6f',
        client_assertion: 'eyJhbGciOiJFUzI1NiJ9.assertion-payload.signature',
        token,
      }
      const query = new URLSearchParams({ grant_type: 'client_credentials', client_id: account.clientId, ...secrets }).toString()
      const from = h.current.logs.length
      // Credentials in the query string, the mistake being guarded against; the body carries them too.
      const issued = await call(`${account.base}/oauth/tokens?${query}`, 'POST', { form: { grant_type: 'client_credentials', client_id: account.clientId, client_secret: account.clientSecret } })
      expect(issued.status).toBe(401)
      const auth = { authorization: basicAuth(account.clientId, account.clientSecret) }
      expect((await call(`${account.base}/oauth/introspect?${query}`, 'POST', { headers: auth, form: { token } })).status).toBe(200)
      expect((await call(`${account.base}/oauth/revoke?${query}`, 'POST', { headers: auth, form: { token: 'unknown' } })).status).toBe(200)
      expect((await call(`${account.base}/oauth/no-such-endpoint?${query}`, 'GET')).status).toBe(404)

      const logged = h.current.logs.slice(from).join('\n')
      for (const [name, value] of Object.entries(secrets)) expect(logged, name).not.toContain(value)
      const urls = requestLines(from).map((line) => line.req?.url)
      expect(urls).toHaveLength(4)
      for (const url of urls) {
        expect(url).toMatch(/\/oauth\/[a-z-]+\?grant_type=\[redacted]&client_id=\[redacted]&client_secret=\[redacted]&code=\[redacted]&refresh_token=\[redacted]&client_assertion=\[redacted]&token=\[redacted]$/)
      }
    })

    it('still logs the query of a management request as sent', async () => {
      const from = h.current.logs.length
      expect((await call(`${account.base}/webhooks/deliveries?status=failed&limit=3`, 'GET', { token: await managementToken(account) })).status).toBe(200)
      expect(requestLines(from).map((line) => line.req?.url)).toEqual(
        expect.arrayContaining([`/accounts/${account.id}/webhooks/deliveries?status=failed&limit=3`]),
      )
    })
  })
})
