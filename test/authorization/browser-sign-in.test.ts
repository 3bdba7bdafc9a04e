import { type ChildProcess, spawn } from 'node:child_process'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import type { BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { type CreatedAccount, forEachDialect, freePort, useHerald } from '../support/herald.js'
import { withChromium } from '../support/chromium.js'
import { createAccount } from '../support/http.js'

// A first sign-in as a new user would make it: examples/login-consent (run as its README says) is the account's
// login and consent app and the relying party, and a real Chromium follows every redirect.

const EXAMPLE = fileURLToPath(new URL('../../examples/login-consent/server.mjs', import.meta.url))

interface ExampleApp {
  url: string
  /** What the app printed, line by line. */
  lines: string[]
  stop(): Promise<void>
}

/** `node examples/login-consent/server.mjs` for the account; answers once it says it is ready. */
async function startExample(account: CreatedAccount): Promise<ExampleApp> {
  const port = await freePort()
  const child: ChildProcess = spawn(process.execPath, [EXAMPLE], {
    env: {
      PATH: process.env.PATH ?? '',
      HERALD_ISSUER: account.issuer,
      HERALD_CLIENT_ID: account.clientId,
      HERALD_CLIENT_SECRET: account.clientSecret,
      PORT: String(port),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const lines: string[] = []
  let errors = ''
  child.stderr?.on('data', (chunk: Buffer) => (errors += chunk.toString('utf8')))
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  await new Promise<void>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      lines.push(line)
      if (line.includes('example ready')) resolve()
    })
    void exited.then(() => reject(new Error(`the example exited before it was ready (code ${child.exitCode}):\n${lines.join('\n')}\n${errors}`)))
  })
  return {
    url: `http://127.0.0.1:${port}`,
    lines,
    async stop() {
      child.kill('SIGTERM')
      await exited
    },
  }
}

const SIGN_IN_PAGES = new Set(['/login', '/consent', '/callback'])

/** The app's sign-in pages the browser was answered, as `METHOD /path STATUS`, in order; redirects included. */
function recordSignInPages(page: Page, app: ExampleApp): string[] {
  const seen: string[] = []
  page.on('response', (response) => {
    const url = new URL(response.url())
    if (url.origin === app.url && SIGN_IN_PAGES.has(url.pathname)) seen.push(`${response.request().method()} ${url.pathname} ${response.status()}`)
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

withChromium('signs in through the example login and consent app in Chromium', (browser) => {
  forEachDialect((dialect) => {
    const h = useHerald(dialect)
    let account: CreatedAccount
    let app: ExampleApp
    let context: BrowserContext

    beforeAll(async () => {
      account = await createAccount(h.current)
      app = await startExample(account)
      context = await browser.current.newContext()
    })
    afterAll(async () => {
      await context?.close()
      await app?.stop()
    })

    it('signs in through the login form and the consent screen, then again at once through the remembered session', async () => {
      const page = await context.newPage()
      const seen = recordSignInPages(page, app)

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
      await startSignIn(page, app)
      await page.waitForURL((url) => url.pathname === '/callback')
      expect(seen).toEqual(['GET /login 302', 'GET /consent 302', 'GET /callback 200'])
      expect(app.lines.filter((line) => line.startsWith('login request'))).toEqual([expect.stringMatching(/skip=false$/), expect.stringMatching(/skip=true$/)])
      const second = await claimsShown(page)
      expect(second).toMatchObject({ iss: account.issuer, sub: 'user_demo', aud: first.aud })
      expect(second.nonce).not.toBe(first.nonce)
    })
  })
})
