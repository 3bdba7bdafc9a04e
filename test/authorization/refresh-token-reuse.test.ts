import { decodeJwt } from 'jose'
import * as oidc from 'openid-client'
import { expect, it } from 'vitest'
import { type CreatedAccount, forEachDialect, useHerald } from '../support/herald.js'
import { basicAuth, call, managementToken } from '../support/http.js'
import { type Waiters, whileFlowLocked } from '../support/row-locks.js'
import { type SignInClient, signedInOffline } from '../support/sign-in.js'

/** Concurrent reuses of one spent token: more than the database pool (10), so some also queue for a connection. */
const REUSES = 20
/**
 * Reuses seen waiting at once before the grant is let go: all of them on SQLite; on PostgreSQL those holding a
 * connection of the pool, short of one for the background work.
 */
const OVERLAPPING = { sqlite: REUSES, postgres: 9 }

/**
 * One incident, one `oauth.refresh_token.reuse_detected`: only the request whose statement revoked the grant
 * announces the reuse, however many reuses and revocations race it (RFC 9700 §4.14.2). The requests are held up
 * until they have all read the grant unrevoked (whileGrantLocked), so they really overlap.
 */
forEachDialect((dialect) => {
  const h = useHerald(dialect)

  interface SignedIn {
    account: CreatedAccount
    rp: SignInClient
    /** The grant's first refresh token, already spent by a refresh. */
    spent: string
    /** Its successor, not yet used. */
    current: string
    grantId: string
  }

  async function spentRefreshToken(): Promise<SignedIn> {
    const { account, rp, config, tokens, refreshToken } = await signedInOffline(h.current)
    const refreshed = await oidc.refreshTokenGrant(config, refreshToken)
    return { account, rp, spent: refreshToken, current: refreshed.refresh_token!, grantId: decodeJwt(tokens.access_token).gid as string }
  }

  /** whileFlowLocked on the grant of `signedIn`. */
  const whileGrantLocked = <T>(signedIn: SignedIn, start: (waiters: Waiters) => Promise<T>) => whileFlowLocked(h.current, signedIn.account.id, signedIn.grantId, start)

  const refresh = ({ account, rp }: SignedIn, token: string) =>
    call<{ error?: string }>(`${account.base}/oauth/tokens`, 'POST', { headers: { authorization: basicAuth(rp.clientId, rp.clientSecret) }, form: { grant_type: 'refresh_token', refresh_token: token } })

  const revoke = ({ account, rp }: SignedIn, token: string) =>
    call(`${account.base}/oauth/revoke`, 'POST', { headers: { authorization: basicAuth(rp.clientId, rp.clientSecret) }, form: { token, token_type_hint: 'refresh_token' } })

  /** How many events of each type the account recorded, read through the events API. */
  async function eventCounts(account: CreatedAccount): Promise<Record<string, number>> {
    const events = await call<{ data: Array<{ type: string; data: { reason?: string } }> }>(`${account.base}/webhooks/events?limit=100`, 'GET', { token: await managementToken(account) })
    expect(events.status).toBe(200)
    const counts: Record<string, number> = {}
    for (const { type, data } of events.body.data) {
      const key = type === 'oauth.grant.revoked' ? `${type}:${data.reason}` : type
      counts[key] = (counts[key] ?? 0) + 1
    }
    return counts
  }

  it(`records one reuse and one revocation for ${REUSES} concurrent reuses of a spent refresh token`, async () => {
    const signedIn = await spentRefreshToken()
    const answers = await whileGrantLocked(signedIn, async (waiters) => {
      const reuses = Array.from({ length: REUSES }, () => refresh(signedIn, signedIn.spent))
      await waiters(OVERLAPPING[dialect])
      return reuses
    })
    expect((await Promise.all(answers)).map((answer) => answer.body.error)).toEqual(Array(REUSES).fill('invalid_grant'))
    expect(await eventCounts(signedIn.account)).toMatchObject({ 'oauth.refresh_token.reuse_detected': 1, 'oauth.grant.revoked:refresh_token_reuse': 1 })
    expect((await refresh(signedIn, signedIn.current)).body.error).toBe('invalid_grant')
  })

  it('still records no reuse when the grant was revoked before the spent token came back', async () => {
    const signedIn = await spentRefreshToken()
    expect((await revoke(signedIn, signedIn.current)).status).toBe(200)
    expect((await refresh(signedIn, signedIn.spent)).body.error).toBe('invalid_grant')
    const counts = await eventCounts(signedIn.account)
    expect(counts['oauth.refresh_token.reuse_detected']).toBeUndefined()
    expect(counts['oauth.grant.revoked:refresh_token_revoked']).toBe(1)
  })

  // PostgreSQL only: there the test sees the revocation queue for the grant's row before the reuse does; on SQLite it
  // sees only that both requests arrived, not which one will write first.
  it.runIf(dialect === 'postgres')('records no reuse when a revocation revokes the grant while a reuse is on its way', async () => {
    const signedIn = await spentRefreshToken()
    const [revoked, reused] = await whileGrantLocked(signedIn, async (waiters) => {
      // The revocation queues for the grant's row first, the reuse (which read the grant unrevoked) behind it.
      const revocation = revoke(signedIn, signedIn.current)
      await waiters(1)
      const reuse = refresh(signedIn, signedIn.spent)
      await waiters(2)
      return [revocation, reuse] as const
    })
    expect((await revoked).status).toBe(200)
    expect((await reused).body.error).toBe('invalid_grant')
    const counts = await eventCounts(signedIn.account)
    expect(counts['oauth.refresh_token.reuse_detected']).toBeUndefined()
    expect(counts['oauth.grant.revoked:refresh_token_revoked']).toBe(1)
    expect(counts['oauth.grant.revoked:refresh_token_reuse']).toBeUndefined()
  })
})
