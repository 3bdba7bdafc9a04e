import type { BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest'
import { type CreatedAccount, forEachDialect, useHerald } from '../support/herald.js'
import { withChromium } from '../support/chromium.js'
import { type ExampleApp, recordPages, startExample } from '../support/example-app.js'
import { call, createAccount, managementToken } from '../support/http.js'
import { LOCAL_DELIVERY } from '../webhooks/support.js'

// A first sign-in as a new user would make it: examples/login-consent (run as its README says) is the account's
// login, consent and logout app and the relying party, and a real Chromium follows every redirect. Herald may call
// the relying party's back-channel logout URI on 127.0.0.1 over http, as its development setup allows.

const SIGN_IN_PAGES = ['/login', '/consent', '/callback']

async function claimsShown(page: Page): Promise<Record<string, unknown>> {
  return JSON.parse((await page.locator('#claims').textContent()) ?? '') as Record<string, unknown>
}

async function startSignIn(page: Page, app: ExampleApp): Promise<void> {
  await page.goto(`${app.url}/`)
  await page.getByRole('link', { name: 'Sign in with Herald' }).click()
}

/** A sign-in in a browser without a session at Herald: the login form, then the consent screen unless it was remembered. */
async function signInWithPassword(page: Page, app: ExampleApp): Promise<Record<string, unknown>> {
  await startSignIn(page, app)
  await page.waitForURL((url) => url.pathname === '/login')
  await page.getByLabel('Username').fill('demo')
  await page.getByLabel('Password').fill('demo')
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.waitForURL((url) => url.pathname === '/consent' || url.pathname === '/callback')
  if (new URL(page.url()).pathname === '/consent') await page.getByRole('button', { name: 'Allow' }).click()
  await page.waitForURL((url) => url.pathname === '/callback')
  return claimsShown(page)
}

withChromium('signs in through the example login and consent app in Chromium', (browser) => {
  forEachDialect((dialect) => {
    const h = useHerald(dialect, LOCAL_DELIVERY)
    let account: CreatedAccount
    let app: ExampleApp
    let context: BrowserContext

    beforeAll(async () => {
      account = await createAccount(h.current)
      app = await startExample(h.current, account)
      context = await browser.current.newContext()
    })
    // A wait for the app's line that never comes ends in a timeout: what it did print says why.
    beforeEach(({ onTestFailed }) => onTestFailed(() => console.error(`The example printed:\n${app.lines.join('\n')}`)))
    afterAll(async () => {
      await context?.close()
      await app?.stop()
    })

    it('signs in through the login form and the consent screen, then again at once through the remembered session', async () => {
      const page = await context.newPage()
      const seen = recordPages(page, app, SIGN_IN_PAGES)

      await startSignIn(page, app)
      await page.waitForURL((url) => url.pathname === '/login')
      await page.getByLabel('Username').fill('demo')
      await page.getByLabel('Password').fill('not the password')
      await page.getByRole('button', { name: 'Sign in' }).click()
      await page.getByRole('alert').waitFor()
      expect(await page.getByRole('alert').textContent()).toBe('Wrong username or password.')

      expect(await page.getByLabel('Remember me').isChecked()).toBe(true)
      await page.getByLabel('Password').fill('demo')
      await page.getByRole('button', { name: 'Sign in' }).click()
      await page.waitForURL((url) => url.pathname === '/consent')
      expect(await page.locator('#scopes code').allTextContents()).toEqual(['openid', 'profile', 'email'])

      await page.getByRole('button', { name: 'Allow' }).click()
      await page.waitForURL((url) => url.pathname === '/callback')
      const first = await claimsShown(page)
      expect(first).toMatchObject({ iss: account.issuer, sub: 'user_demo', name: 'Demo User', email: 'demo@example.com', email_verified: true })
      expect(seen).toEqual(['GET /login 200', 'POST /login 200', 'POST /login 303', 'GET /consent 200', 'POST /consent 303', 'GET /callback 200'])

      // The herald_session cookie from the first sign-in: Herald's login request says skip, and the app accepts at
      // once; the remembered consent goes through too, so the browser comes back without a form on the way.
      seen.length = 0
      await page.getByRole('link', { name: 'Sign in again' }).click()
      await page.waitForURL((url) => url.pathname === '/callback' && seen.length > 0)
      expect(seen).toEqual(['GET /login 302', 'GET /consent 302', 'GET /callback 200'])
      expect(app.lines.filter((line) => line.startsWith('login request'))).toEqual([expect.stringMatching(/skip=false$/), expect.stringMatching(/skip=true$/)])
      const second = await claimsShown(page)
      expect(second).toMatchObject({ iss: account.issuer, sub: 'user_demo', aud: first.aud })
      expect(second.nonce).not.toBe(first.nonce)
    })

    it("signs out through the relying party and the logout app; Herald tells the relying party on the back channel", async () => {
      const signOutContext = await browser.current.newContext()
      const page = await signOutContext.newPage()
      const seen = recordPages(page, app, ['/sign-out', '/logout', '/'])
      const { sid } = await signInWithPassword(page, app)
      expect(sid).toEqual(expect.any(String))

      // RP-initiated logout: the relying party's session ends, then Herald asks the account's logout app.
      seen.length = 0
      await page.getByRole('button', { name: 'Sign out' }).click()
      await page.waitForURL((url) => url.pathname === '/logout')
      expect(await page.getByRole('heading').textContent()).toBe('Sign out of Herald?')
      expect(await page.locator('strong').textContent()).toBe('user_demo')
      await page.getByRole('button', { name: 'Sign out' }).click()
      await page.waitForURL((url) => url.pathname === '/')
      expect(seen).toEqual(['POST /sign-out 303', 'GET /logout 200', 'POST /logout 303', 'GET / 200'])
      expect(await page.locator('#signed-out').textContent()).toMatch(/^You signed out at \d\d:\d\d:\d\d UTC\./)

      // Herald ended its session, and sends the relying party a logout token, which it verified with jose.
      await app.line(new RegExp(`^back-channel logout from Herald for sub=user_demo sid=${sid}: ended 0 live session`))
      await page.reload()
      expect(await page.locator('#signed-out').textContent()).toMatch(/Herald's back-channel logout for that session arrived at \d\d:\d\d:\d\d UTC\.$/)
      expect(app.lines.filter((line) => line.startsWith('logout request'))).toEqual([expect.stringMatching(/^logout request for user_demo from cli_\w+$/)])

      // Herald's session is gone: the next sign-in asks for the password. A session that Herald ends from its side
      // (here through the sessions API) ends the relying party's live one too.
      const again = await signInWithPassword(page, app)
      expect(again.sid).not.toBe(sid)
      const ended = await call(`${account.base}/oauth/sessions?subject=user_demo`, 'DELETE', { token: await managementToken(account, 'herald:sessions:write') })
      expect(ended.status, ended.text).toBe(204)
      await app.line(new RegExp(`^back-channel logout from Herald for sub=user_demo sid=${String(again.sid)}: ended 1 live session`))
      await page.goto(`${app.url}/`)
      expect(await page.locator('#signed-out').textContent()).toMatch(/^Signed out by Herald at \d\d:\d\d:\d\d UTC: Herald's back-channel logout ended your session here\.$/)
      await signOutContext.close()
    })

    it('refuses a logout token that is not one of Herald\'s for the demo client', async () => {
      const forged = await fetch(`${app.url}/backchannel-logout`, { method: 'POST', body: new URLSearchParams({ logout_token: 'eyJhbGciOiJub25lIn0.e30.' }) })
      expect(forged.status).toBe(400)
      expect(forged.headers.get('cache-control')).toBe('no-store')
      expect(await forged.json()).toMatchObject({ error: 'invalid_request' })
      await app.line(/^refused a back-channel logout: /)
    })
  })
})
