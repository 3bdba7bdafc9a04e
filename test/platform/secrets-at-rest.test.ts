import { existsSync, readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import type { DB } from '../../src/platform/storage/schema.js'
import { type CreatedAccount, OPERATOR_TOKEN, forEachDialect, useHerald } from '../support/herald.js'
import { basicAuth, call, createAccount, managementToken } from '../support/http.js'

/** The tables of the Kysely schema that hold what this test looks for; the dump reads every table that exists. */
const SCHEMA_TABLES = ['accounts', 'account_settings', 'signing_keys', 'clients', 'scopes', 'events', 'token_revocations'] as const satisfies ReadonlyArray<keyof DB>

/** A private JWK member (RFC 7518 §6.2.2, §6.3.2), bare or inside a JSON string nested in JSON. */
const PRIVATE_JWK_MEMBER = /\\*"(d|p|q|dp|dq|qi)\\*"\s*:/

forEachDialect((dialect) => {
  const h = useHerald(dialect)

  interface Secrets {
    account: CreatedAccount
    accessToken: string
    /** HERALD_SECRET_KEY and the other spellings of the same 32 bytes. */
    masterKeyForms: string[]
  }

  let prepared: Secrets | undefined

  /** One account through the operator API, a token, a rotation: every kind of secret Herald handles has been made. */
  async function prepare(): Promise<Secrets> {
    if (prepared) return prepared
    const account = await createAccount(h.current, 'secrets')
    const accessToken = await managementToken(account, 'herald:keys:write')
    const rotated = await call(`${account.base}/keys/rotate`, 'POST', { token: accessToken })
    expect(rotated.status).toBe(200)
    // A client_secret sent in the body, where the client is registered for Basic: refused, and must not be logged.
    const posted = await call(`${account.base}/oauth/tokens`, 'POST', {
      form: { grant_type: 'client_credentials', client_id: account.clientId, client_secret: account.clientSecret },
    })
    expect(posted.status).toBeGreaterThanOrEqual(400)
    const key = Buffer.from(h.current.secretKey, 'base64')
    expect(key).toHaveLength(32)
    prepared = { account, accessToken, masterKeyForms: [h.current.secretKey, key.toString('hex'), key.toString('base64url')] }
    return prepared
  }

  async function dumpEveryTable(): Promise<{ tables: string[]; rows: Record<string, unknown[]>; text: string }> {
    const { db } = h.current.herald.database
    const tables = (await db.introspection.getTables()).map((table) => table.name).sort()
    const rows: Record<string, unknown[]> = {}
    for (const table of tables) rows[table] = await db.selectFrom(table as keyof DB).selectAll().execute()
    return { tables, rows, text: JSON.stringify(rows) }
  }

  describe('secrets at rest', () => {
    it('stores no client secret, no master key, no PEM and no private JWK in any table', async () => {
      const { account, accessToken, masterKeyForms } = await prepare()
      const dump = await dumpEveryTable()
      expect(dump.tables).toEqual(expect.arrayContaining([...SCHEMA_TABLES]))
      // The dump did read the rows this test made, so the absence checks below mean something.
      expect(dump.text).toContain(account.id)
      expect(dump.text).toContain(account.clientId)
      expect(dump.rows.signing_keys!.length).toBeGreaterThanOrEqual(4)

      expect(dump.text).not.toContain(account.clientSecret)
      for (const form of masterKeyForms) expect(dump.text).not.toContain(form)
      expect(dump.text).not.toContain(accessToken)
      expect(dump.text).not.toContain('-----BEGIN')
      expect(dump.text).not.toContain('PRIVATE KEY')
      expect(dump.text).not.toMatch(PRIVATE_JWK_MEMBER)
    })

    it('seals every private key (v1. format) and publishes only public JWKs', async () => {
      const { account } = await prepare()
      const { db } = h.current.herald.database
      const keys = await db.selectFrom('signing_keys').selectAll().where('account_id', '=', account.id).execute()
      expect(keys).toHaveLength(4)
      for (const key of keys) {
        expect(key.private_key).toMatch(/^v1\.[0-9a-f]{12}\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/)
        const jwk = JSON.parse(key.public_jwk) as Record<string, unknown>
        expect(jwk.kid).toBe(key.id)
        for (const member of ['d', 'p', 'q', 'dp', 'dq', 'qi']) expect(jwk).not.toHaveProperty(member)
      }
      const clients = await db.selectFrom('clients').selectAll().where('id', '=', account.clientId).execute()
      expect(clients).toHaveLength(1)
      expect(clients[0]!.secret_hash).toBeTruthy()
      expect(clients[0]!.secret_hash).not.toBe(account.clientSecret)
    })

    it.runIf(dialect === 'sqlite')('writes none of them to the SQLite files either', async () => {
      const { account, masterKeyForms } = await prepare()
      if (h.current.database.config.dialect !== 'sqlite') throw new Error('unreachable')
      const base = h.current.database.config.filename
      const files = [base, `${base}-wal`].filter((file) => existsSync(file))
      const bytes = files.map((file) => readFileSync(file).toString('latin1')).join('\n')
      expect(bytes).toContain(account.clientId)
      expect(bytes).not.toContain(account.clientSecret)
      for (const form of masterKeyForms) expect(bytes).not.toContain(form)
      expect(bytes).not.toContain('-----BEGIN')
    })

    it('writes no secret, master key, access token, operator token or private key to the logs', async () => {
      const { account, accessToken, masterKeyForms } = await prepare()
      const logs = h.current.logs.join('\n')
      // The logs did record these requests, so the absence checks below mean something.
      expect(logs).toContain('/keys/rotate')
      expect(logs).toContain('/oauth/tokens')
      expect(logs).not.toContain(account.clientSecret)
      expect(logs).not.toContain(encodeURIComponent(account.clientSecret))
      expect(logs).not.toContain(basicAuth(account.clientId, account.clientSecret).slice('Basic '.length))
      for (const form of masterKeyForms) expect(logs).not.toContain(form)
      expect(logs).not.toContain(accessToken)
      expect(logs).not.toContain(accessToken.split('.')[2])
      expect(logs).not.toContain(OPERATOR_TOKEN)
      expect(logs).not.toContain('-----BEGIN')
      expect(logs).not.toMatch(PRIVATE_JWK_MEMBER)
    })

    it('refuses to sign with a private key that is not the pair of the public key its row publishes', async () => {
      const other = await createAccount(h.current, 'mismatch')
      const third = await createAccount(h.current, 'third')
      const { db } = h.current.herald.database
      const es256 = (accountId: string) => db.selectFrom('signing_keys').select(['id', 'public_jwk']).where('account_id', '=', accountId).where('alg', '=', 'ES256').executeTakeFirstOrThrow()
      const [own, foreign] = await Promise.all([es256(other.id), es256(third.id)])
      // Nothing has signed for the account yet: the pair is checked when its private key is first read.
      await db.updateTable('signing_keys').set({ public_jwk: foreign.public_jwk }).where('id', '=', own.id).execute()
      const refused = await call(`${other.base}/oauth/tokens`, 'POST', {
        headers: { authorization: basicAuth(other.clientId, other.clientSecret) },
        form: { grant_type: 'client_credentials' },
      })
      expect(refused.status).toBeGreaterThanOrEqual(500)
    })

    it("refuses to sign with a sealed private key copied into another key's row", async () => {
      const other = await createAccount(h.current, 'swap')
      const { db } = h.current.herald.database
      const rows = await db.selectFrom('signing_keys').select(['id', 'alg', 'private_key']).where('account_id', '=', other.id).execute()
      const signing = rows.find((row) => row.alg === 'ES256')
      const idToken = rows.find((row) => row.alg === 'RS256')
      if (!signing || !idToken) throw new Error('the account has a key of each algorithm')
      const tokenRequest = () =>
        call(`${other.base}/oauth/tokens`, 'POST', {
          headers: { authorization: basicAuth(other.clientId, other.clientSecret) },
          form: { grant_type: 'client_credentials' },
        })

      // Nothing has signed for the account yet, so its private key is read at the first token request.
      await db.updateTable('signing_keys').set({ private_key: idToken.private_key }).where('id', '=', signing.id).execute()
      const refused = await tokenRequest()
      expect(refused.status).toBeGreaterThanOrEqual(500)
      expect(refused.text).not.toContain('BEGIN')

      // Put back, the row opens again: the failure came from the swap and nothing else.
      await db.updateTable('signing_keys').set({ private_key: signing.private_key }).where('id', '=', signing.id).execute()
      expect((await tokenRequest()).status).toBe(200)
    })
  })
})
