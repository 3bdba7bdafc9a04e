import { decodeJwt } from 'jose'
import { beforeAll, describe, expect, it } from 'vitest'
import { parseArgs } from '../../src/cli/args.js'
import { accountCommands } from '../../src/cli/commands.js'
import { type CreatedAccount, forEachDialect, useHerald } from '../support/herald.js'
import { basicAuth, call, createAccount, managementToken } from '../support/http.js'

const TRIES = 5

/**
 * A secret reset refuses every token issued before it, however close: the test clock stands still, so each token
 * is issued in the very millisecond of the reset that follows it (with whole-second `iat`, all of them survived).
 */
forEachDialect((dialect) => {
  const h = useHerald(dialect)
  let account: CreatedAccount
  let admin: string
  /** Another client of the account, which introspects. */
  let resourceServer: { client_id: string; client_secret: string }

  beforeAll(async () => {
    account = await createAccount(h.current, 'cutoff')
    admin = await managementToken(account)
    const created = await call<{ client_id: string; client_secret: string }>(`${account.base}/oauth/clients`, 'POST', { token: admin, json: { grant_types: ['client_credentials'] } })
    resourceServer = created.body
  })

  const readClients = (token: string) => call(`${account.base}/oauth/clients`, 'GET', { token })
  const introspect = (token: string) =>
    call(`${account.base}/oauth/introspect`, 'POST', { headers: { authorization: basicAuth(resourceServer.client_id, resourceServer.client_secret) }, form: { token } })

  /** The token is refused by the management API and introspects inactive. */
  async function expectCutOff(token: string): Promise<void> {
    const refused = await readClients(token)
    expect(refused.status, refused.text).toBe(401)
    expect(refused.body).toMatchObject({ code: 'invalid_token', detail: 'The client credentials changed after this token was issued' })
    expect((await introspect(token)).body).toEqual({ active: false })
  }

  async function expectWorks(token: string): Promise<void> {
    expect((await readClients(token)).status).toBe(200)
    expect((await introspect(token)).body).toMatchObject({ active: true })
  }

  describe('the credential cut-off, to the millisecond', () => {
    it(`refuses, in ${TRIES} of ${TRIES} tries, a token issued in the same millisecond as the secret rotation that follows it`, async () => {
      const client = (await call<{ client_id: string; client_secret: string }>(`${account.base}/oauth/clients`, 'POST', {
        token: admin,
        json: { grant_types: ['client_credentials'], scope: 'herald:clients:read' },
      })).body
      const credentials = (secret: string) => ({ ...account, clientId: client.client_id, clientSecret: secret })
      let secret = client.client_secret
      const survivors: string[] = []
      for (let attempt = 0; attempt < TRIES; attempt++) {
        const before = await managementToken(credentials(secret))
        expect(decodeJwt(before).iat).toBe(Math.floor(h.current.clock.now() / 1000))
        const rotated = await call<{ client_secret: string }>(`${account.base}/oauth/clients/${client.client_id}/secret`, 'POST', { token: admin })
        expect(rotated.status).toBe(200)
        secret = rotated.body.client_secret
        if ((await readClients(before)).status !== 401) survivors.push(before)
        await expectCutOff(before)
        // Issued after the rotation, in the same millisecond still: it works.
        await expectWorks(await managementToken(credentials(secret)))
      }
      expect(survivors).toEqual([])
    })

    it(`refuses, in ${TRIES} of ${TRIES} tries, an admin token issued in the same millisecond as \`herald accounts reset-admin\``, async () => {
      const other = await createAccount(h.current, 'cutoff-admin')
      let secret = other.clientSecret
      const survivors: string[] = []
      for (let attempt = 0; attempt < TRIES; attempt++) {
        const before = await managementToken({ ...other, clientSecret: secret })
        const printed: string[] = []
        await accountCommands['reset-admin']!(h.current.herald, parseArgs(['--account', other.id, '--json']), (line) => printed.push(line))
        secret = (JSON.parse(printed.join('\n')) as { admin_client: { client_secret: string } }).admin_client.client_secret
        const refused = await call(`${other.base}/oauth/clients`, 'GET', { token: before })
        if (refused.status !== 401) survivors.push(before)
        expect(refused.body).toMatchObject({ code: 'invalid_token', detail: 'The client credentials changed after this token was issued' })
        expect((await call(`${other.base}/oauth/clients`, 'GET', { token: await managementToken({ ...other, clientSecret: secret }) })).status).toBe(200)
      }
      expect(survivors).toEqual([])
    })

    it('keeps cutting off once the clock has moved on: a rotation refuses a token issued a second earlier', async () => {
      const client = (await call<{ client_id: string; client_secret: string }>(`${account.base}/oauth/clients`, 'POST', {
        token: admin,
        json: { grant_types: ['client_credentials'], scope: 'herald:clients:read' },
      })).body
      const before = await managementToken({ ...account, clientId: client.client_id, clientSecret: client.client_secret })
      h.current.clock.advanceSeconds(1)
      const rotated = await call<{ client_secret: string }>(`${account.base}/oauth/clients/${client.client_id}/secret`, 'POST', { token: admin })
      await expectCutOff(before)
      await expectWorks(await managementToken({ ...account, clientId: client.client_id, clientSecret: rotated.body.client_secret }))
    })
  })
})
