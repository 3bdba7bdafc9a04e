import type { Page } from 'playwright-core'
import { afterAll, beforeAll, expect, it } from 'vitest'
import type { CreatedAccount } from '../support/herald.js'
import { DocumentServer, documentFor } from '../support/client-documents.js'
import { call, createAccount, managementToken } from '../support/http.js'
import { CONSENT_URL, LOGIN_URL, authorizationUrl } from '../support/sign-in.js'
import { forEachConsole, lookAt, managementClient, newPage, openSignedIn, signIn } from './support.js'

// The authorization side: clients (register with a secret shown once, rotate it, delete) and scopes (add; a scope
// a client still allows can't be deleted, and the console says why), hidden from a token without their scopes.

forEachConsole('the console manages clients and scopes in Chromium', (dialect, h, browser) => {
  let account: CreatedAccount
  let page: Page

  beforeAll(async () => {
    account = await createAccount(h.current, 'acme')
    page = await newPage(browser)
  })
  afterAll(async () => {
    await page?.context().close()
  })

  const clientsApi = async (path = '') => call<{ client_id: string; client_secret?: string; data?: Array<{ client_id: string; client_name?: string }> }>(`${account.base}/oauth/clients${path}`, 'GET', { token: await managementToken(account) })

  it('adds a scope, registers a client allowed it, and refuses to delete the scope in words', async () => {
    await openSignedIn(page, h.current, account)
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Scopes' }).click()
    await page.locator('tr[data-scope="openid"]').waitFor()
    await page.getByLabel('Scope name').fill('invoices:read')
    await page.getByLabel('Scope description').fill('Read invoices')
    await page.getByRole('button', { name: 'Add scope' }).click()
    await page.locator('tr[data-scope="invoices:read"]').waitFor()
    await lookAt(page, dialect, 'scopes')

    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Clients' }).click()
    await page.locator('tr[data-client]').first().waitFor()
    await page.getByRole('button', { name: 'Register a client' }).click()
    await page.getByLabel('Name').fill('Invoice app')
    await page.getByLabel('Redirect URIs (one per line; for authorization_code)').fill('https://app.example/callback')
    await page.getByLabel('Scope (space-separated)').fill('openid invoices:read')
    await lookAt(page, dialect, 'client-register')
    await page.getByRole('button', { name: 'Register', exact: true }).click()
    const secret = page.locator('[data-secret]')
    await secret.waitFor()
    const listed = (await clientsApi('?limit=200')).body.data!.find((client) => client.client_name === 'Invoice app')!
    expect(await page.getByRole('status').textContent()).toContain(`Client ${listed.client_id} registered.`)
    const first = await secret.textContent()
    await lookAt(page, dialect, 'clients')
    // The account's original management client is offered neither: the API refuses its deletion, and a new secret
    // would break the credentials its users saved.
    const adminRow = page.locator(`tr[data-client="${account.clientId}"]`)
    expect(await adminRow.getByText('admin', { exact: true }).count()).toBe(1)
    expect(await adminRow.getByRole('button', { name: /^(Delete|Rotate secret)/ }).count()).toBe(0)
    expect(await page.locator(`tr[data-client="${listed.client_id}"]`).getByRole('button', { name: /^(Delete|Rotate secret)/ }).count()).toBe(2)

    await page.getByRole('button', { name: `Rotate secret of ${listed.client_id}` }).click()
    await page.getByText(`Client ${listed.client_id} has a new secret`).waitFor()
    expect(await secret.textContent()).not.toBe(first)

    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Scopes' }).click()
    await page.getByRole('button', { name: 'Delete invoices:read' }).click()
    expect(await page.getByRole('alert').textContent()).toMatch(/^Can't delete invoices:read: .+/)

    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Clients' }).click()
    await page.getByRole('button', { name: `Delete ${listed.client_id}` }).click()
    await page.getByRole('button', { name: 'Delete for good' }).click()
    await page.locator(`tr[data-client="${listed.client_id}"]`).waitFor({ state: 'detached' })
    expect((await clientsApi(`/${listed.client_id}`)).status).toBe(404)

    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Scopes' }).click()
    await page.getByRole('button', { name: 'Delete invoices:read' }).click()
    expect(await page.getByRole('status').textContent()).toBe('Scope invoices:read deleted.')
    await page.locator('tr[data-scope="invoices:read"]').waitFor({ state: 'detached' })
  })

  it('registers a client for token exchange (RFC 8693), impersonating the subject when asked', async () => {
    await openSignedIn(page, h.current, account, 'clients')
    await page.getByRole('button', { name: 'Register a client' }).click()
    await page.getByLabel('Name').fill('Gateway')
    await page.getByRole('checkbox', { name: 'authorization_code' }).uncheck()
    await page.getByRole('checkbox', { name: 'urn:ietf:params:oauth:grant-type:token-exchange' }).check()
    await page.getByRole('checkbox', { name: /^Token exchange impersonates the subject/ }).check()
    await page.getByRole('button', { name: 'Register', exact: true }).click()
    await page.locator('[data-secret]').waitFor()
    const listed = (await clientsApi('?limit=200')).body.data!.find((client) => client.client_name === 'Gateway')
    expect(listed).toMatchObject({ grant_types: ['urn:ietf:params:oauth:grant-type:token-exchange'], token_exchange_impersonation: true })

    // And back to delegation, on the client's own page.
    await openSignedIn(page, h.current, account, `clients/${listed!.client_id}`)
    await page.getByRole('checkbox', { name: /^Token exchange impersonates the subject/ }).uncheck()
    await page.getByRole('button', { name: 'Save' }).click()
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor()
    expect((await clientsApi(`/${listed!.client_id}`)).body).toMatchObject({ token_exchange_impersonation: false })
  })

  it("shows a metadata document's client as the document's, offering no edit the API would refuse", async () => {
    const documents = new DocumentServer()
    await documents.start()
    try {
      const url = documents.url('/notes.json')
      documents.serve('/notes.json', documentFor(url))
      const token = await managementToken(account)
      expect((await call(`${account.base}/settings`, 'PATCH', { token, json: { login_url: LOGIN_URL, consent_url: CONSENT_URL, client_id_metadata_documents: true } })).status).toBe(200)
      // Naming the document at authorize makes its client.
      expect((await call(authorizationUrl(account.base, url), 'GET', { redirect: 'manual' })).status).toBe(302)
      await openSignedIn(page, h.current, account, `clients/${encodeURIComponent(url)}`)
      await page.locator('[data-document-client]').waitFor()
      await page.getByText('"client_name": "Notes"').waitFor()
      expect(await page.getByRole('button', { name: 'Save' }).count()).toBe(0)
    } finally {
      await documents.stop()
    }
  })

  it("says on the account's original management client's page why it can't be deleted, and keeps its scope as it is", async () => {
    await openSignedIn(page, h.current, account, `clients/${account.clientId}`)
    await page.locator('[data-admin-client]').getByText('herald accounts reset-admin').waitFor()
    expect(await page.getByLabel('Scope (space-separated)').getAttribute('readonly')).not.toBeNull()
    await page.getByLabel('Name').fill('ops')
    await page.getByRole('button', { name: 'Save' }).click()
    await page.getByRole('status').getByText('Saved.').waitFor()
    expect((await clientsApi(`/${account.clientId}`)).body).toMatchObject({ client_name: 'ops', admin: true })
  })

  it('hides clients and scopes from a token without herald:clients:read', async () => {
    const reader = await managementClient(account, 'herald:webhooks:read')
    // A new page load: the token was in memory only, so the sign-in form comes back.
    await page.goto(`${h.current.origin}/console/`)
    await signIn(page, account, reader.clientId, reader.secret)
    const nav = page.getByRole('navigation', { name: 'Console' })
    await nav.getByRole('link', { name: 'Events' }).waitFor()
    expect(await nav.getByRole('link', { name: 'Clients' }).count()).toBe(0)
    expect(await nav.getByRole('link', { name: 'Scopes' }).count()).toBe(0)
  })
})
