import { type ChildProcess, spawn } from 'node:child_process'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import type { BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest'
import { type CreatedAccount, type TestHerald, forEachDialect, freePort, useHerald } from '../support/herald.js'
import { withChromium } from '../support/chromium.js'
import { call, createAccount, managementToken } from '../support/http.js'
import { LOCAL_DELIVERY } from '../webhooks/support.js'

// A first sign-in as a new user would make it: examples/login-consent (run as its README says) is the account's
// login, consent and logout app and the relying party, and a real Chromium follows every redirect. Herald may call
// the relying party's back-channel logout URI on 127.0.0.1 over http, as its development setup allows.

const EXAMPLE = fileURLToPath(new URL('../../examples/login-consent/server.mjs', import.meta.url))

interface ExampleApp {
  url: string
  /** What the app printed, line by line. */
  lines: string[]
  /** The first line, printed already or to come, that `matches`. */
  line(matches: RegExp): Promise<string>
  stop(): Promise<void>
}

/**
 * `node examples/login-consent/server.mjs` for the account; answers once it says it is ready. Herald's own `PORT`
 * is in its environment, as in a shell that started Herald: the app must keep to `EXAMPLE_PORT`.
 */
async function startExample(herald: TestHerald, account: CreatedAccount): Promise<ExampleApp> {
  const port = await freePort()
  const child: ChildProcess = spawn(process.execPath, [EXAMPLE], {
    env: {
      PATH: process.env.PATH ?? '',
      HERALD_ISSUER: account.issuer,
      HERALD_CLIENT_ID: account.clientId,
      HERALD_CLIENT_SECRET: account.clientSecret,
      PORT: new URL(herald.origin).port,
      EXAMPLE_PORT: String(port),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const lines: string[] = []
  const waiting: Array<{ matches: RegExp; resolve: (line: string) => void }> = []
  let errors = ''
  child.stderr?.on('data', (chunk: Buffer) => (errors += chunk.toString('utf8')))
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  await new Promise<void>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      lines.push(line)
      for (const waiter of waiting.filter(({ matches }) => matches.test(line))) {
        waiting.splice(waiting.indexOf(waiter), 1)
        waiter.resolve(line)
      }
      if (line.includes('example ready')) resolve()
    })
    void exited.then(() => reject(new Error(`the example exited before it was ready (code ${child.exitCode}):\n${lines.join('\n')}\n${errors}`)))
  })
  expect(errors, 'what the example printed on stderr').toBe('')
  return {
    url: `http://127.0.0.1:${port}`,
    lines,
    line(matches) {
      const printed = lines.find((line) => matches.test(line))
      return printed === undefined ? new Promise((resolve) => waiting.push({ matches, resolve })) : Promise.resolve(printed)
    },
    async stop() {
      child.kill('SIGTERM')
      await exited
    },
  }
}

const SIGN_IN_PAGES = ['/login', '/consent', '/callback']

/** The app's `pages` the browser was answered, as `METHOD /path STATUS`, in order; redirects included. */
function recordPages(page: Page, app: ExampleApp, pages: readonly string[] = SIGN_IN_PAGES): string[] {
  const seen: string[] = []
  page.on('response', (response) => {
    const url = new URL(response.url())
    if (url.origin === app.url && pages.includes(url.pathname)) seen.push(`${response.request().method()} ${url.pathname} ${response.status()}`)
  })
  return seen
}

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
      const seen = recordPages(page, app)

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
