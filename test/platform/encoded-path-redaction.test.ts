import { expect, it } from 'vitest'
import { forEachDialect, useHerald } from '../support/herald.js'
import { basicAuth, call, createAccount } from '../support/http.js'

/** The log's redaction of OAuth queries (see test/authorization/log-redaction.test.ts) follows the path as routed. */
forEachDialect((dialect) => {
  const h = useHerald(dialect)

  it('redacts the query of an OAuth endpoint reached through a percent-encoded path', async () => {
    const account = await createAccount(h.current, 'encoded')
    const secret = account.clientSecret
    const from = h.current.logs.length
    // `%6F` is `o`: the request reaches the token endpoint, credentials in its query as some clients send them.
    const url = `${account.base}/%6Fauth/tokens?grant_type=client_credentials&client_secret=${encodeURIComponent(secret)}`
    const issued = await call<{ access_token?: string }>(url, 'POST', { headers: { authorization: basicAuth(account.clientId, secret) }, form: { grant_type: 'client_credentials' } })
    expect(issued.status, issued.text).toBe(200)
    expect(issued.body.access_token).toBeTruthy()

    const lines = h.current.logs.slice(from)
    expect(lines.join('\n')).not.toContain(secret)
    const urls = lines.map((line) => JSON.parse(line) as { msg: string; req?: { url: string } }).filter((line) => line.msg === 'incoming request').map((line) => line.req?.url)
    expect(urls).toEqual([`/accounts/${account.id}/%6Fauth/tokens?grant_type=[redacted]&client_secret=[redacted]`])
  })
})
