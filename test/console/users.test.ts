import type { Page } from 'playwright-core'
import { afterAll, beforeAll, expect, it } from 'vitest'
import type { CreatedAccount } from '../support/herald.js'
import { call, createAccount, managementToken } from '../support/http.js'
import { Browser, LoginApp, authorizationUrl, prepareSignIn, signIn } from '../support/sign-in.js'
import { forEachConsole, lookAt, newPage, openSignedIn } from './support.js'

// A user's sessions and consents, looked up by subject: a real sign-in makes one of each, the console ends and
// revokes them, and the API agrees.

forEachConsole("the console ends a user's sessions and revokes consents in Chromium", (dialect, h, browser) => {
  let account: CreatedAccount
  let clientId: string
  let page: Page

  beforeAll(async () => {
    account = await createAccount(h.current, 'acme')
    const client = await prepareSignIn(account)
    clientId = client.clientId
    await signIn(new Browser(), await LoginApp.of(account), authorizationUrl(account.base, clientId), 'user-1', { remember: true })
    page = await newPage(browser)
  })
  afterAll(async () => {
    await page?.context().close()
  })

  const listed = async (what: 'sessions' | 'consents') => {
    const response = await call<{ data: unknown[] }>(`${account.base}/oauth/${what}?subject=user-1`, 'GET', { token: await managementToken(account) })
    return response.body.data.length
  }

  it("looks a user up by subject, with the subject in the URL, and ends the session and revokes the consent", async () => {
    await openSignedIn(page, h.current, account)
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Users' }).click()
    await page.getByText('Look up a user by the subject').waitFor()
    await page.getByLabel('Subject').fill('user-1')
    await page.getByRole('button', { name: 'Look up' }).click()
    await page.waitForURL((url) => url.searchParams.get('subject') === 'user-1')
    const session = page.locator('tr[data-session]')
    await session.waitFor()
    await page.locator(`tr[data-consent="${clientId}"]`).waitFor()
    await lookAt(page, dialect, 'user')

    await session.getByRole('button', { name: 'End session' }).click()
    await page.getByText('user-1 has no live session.').waitFor()
    expect(await page.getByRole('status').textContent()).toMatch(/^Session .+ ended\.$/)
    expect(await listed('sessions')).toBe(0)

    await page.getByRole('button', { name: `Revoke consent to ${clientId}` }).click()
    await page.getByText('user-1 has no remembered consent.').waitFor()
    expect(await listed('consents')).toBe(0)
  })
})
