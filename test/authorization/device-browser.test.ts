import { createRemoteJWKSet, jwtVerify } from 'jose'
import type { DeviceAuthorizationResponse } from 'oauth4webapi'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest'
import { withChromium } from '../support/chromium.js'
import { type DeviceClient, deviceClient, poll, startDevice } from '../support/device.js'
import { type ExampleApp, recordPages, startExample } from '../support/example-app.js'
import { type CreatedAccount, forEachDialect, useHerald } from '../support/herald.js'
import { createAccount } from '../support/http.js'
import { LOCAL_DELIVERY } from '../webhooks/support.js'

// RFC 8628 as a user meets it: a device (oauth4webapi, the "CLI side") starts a device authorization and polls the
// token endpoint, while a real Chromium opens the verification URI and goes through examples/login-consent's code
// entry page, login and consent to its done page. Each poll comes one interval after the last, on the injected clock.

const DEVICE_PAGES = ['/device', '/login', '/consent', '/device-done']

async function submitCode(page: Page, code: string, button: 'Continue' | 'Cancel'): Promise<void> {
  await page.getByLabel('Code').fill(code)
  await page.getByRole('button', { name: button }).click()
}

/** A user code the device was not given: the alphabet's first letter where the real code has another. */
function wrongCode(userCode: string): string {
  return userCode.replace(/[^-]/g, (letter) => (letter === 'B' ? 'C' : 'B'))
}

withChromium('connects a device through the example app in Chromium', (browser) => {
  forEachDialect((dialect) => {
    const h = useHerald(dialect, LOCAL_DELIVERY)
    let account: CreatedAccount
    let app: ExampleApp
    let device: DeviceClient

    beforeAll(async () => {
      account = await createAccount(h.current)
      app = await startExample(h.current, account)
      const [, clientId] = /^Device client (\S+):/.exec(await app.line(/^Device client /))!
      device = await deviceClient(account, clientId!)
    })
    beforeEach(({ onTestFailed }) => onTestFailed(() => console.error(`The example printed:\n${app.lines.join('\n')}`)))
    afterAll(async () => {
      await app?.stop()
    })

    /** The device's next poll, one interval after its last (RFC 8628 §3.2: 5 s unless the answer said). */
    async function pollLater(started: DeviceAuthorizationResponse) {
      h.current.clock.advance((started.interval ?? 5) * 1000)
      return poll(device, started.device_code)
    }

    it('takes the code the user types (a wrong one first), then login and consent; the polling device gets its tokens', async () => {
      const context = await browser.current.newContext()
      const page = await context.newPage()
      const seen = recordPages(page, app, DEVICE_PAGES)
      const started = await startDevice(device, 'openid profile offline_access')
      expect(await poll(device, started.device_code)).toEqual({ error: 'authorization_pending' })

      await page.goto(started.verification_uri)
      await page.waitForURL((url) => url.pathname === '/device')
      expect(await page.getByLabel('Code').inputValue()).toBe('')
      await submitCode(page, wrongCode(started.user_code), 'Continue')
      await page.getByRole('alert').waitFor()
      expect(await page.getByRole('alert').textContent()).toBe('The user code is wrong, expired or used; 4 more attempts')
      expect(await pollLater(started)).toEqual({ error: 'authorization_pending' })

      await submitCode(page, started.user_code.toLowerCase().replace('-', ' '), 'Continue')
      await page.waitForURL((url) => url.pathname === '/login')
      expect(await page.locator('strong').textContent()).toBe('Demo device (examples/login-consent)')
      await page.getByLabel('Username').fill('demo')
      await page.getByLabel('Password').fill('demo')
      await page.getByRole('button', { name: 'Sign in' }).click()
      await page.waitForURL((url) => url.pathname === '/consent')
      expect(await page.locator('#scopes code').allTextContents()).toEqual(['openid', 'profile', 'offline_access'])
      expect(await pollLater(started)).toEqual({ error: 'authorization_pending' })

      await page.getByRole('button', { name: 'Allow' }).click()
      await page.waitForURL((url) => url.pathname === '/device-done')
      expect(await page.getByRole('status').textContent()).toMatch(/^You can go back to your device/)
      expect(seen).toEqual(['GET /device 200', 'POST /device 200', 'POST /device 303', 'GET /login 200', 'POST /login 303', 'GET /consent 200', 'POST /consent 303', 'GET /device-done 200'])

      const tokens = await pollLater(started)
      if ('error' in tokens) throw new Error(`no tokens: ${tokens.error}`)
      expect(tokens.refresh_token).toEqual(expect.any(String))
      const { payload } = await jwtVerify(tokens.id_token!, createRemoteJWKSet(new URL(`${account.issuer}/.well-known/jwks.json`)), {
        issuer: account.issuer,
        audience: device.clientId,
        currentDate: new Date(h.current.clock.now()),
      })
      expect(payload).toMatchObject({ sub: 'user_demo', name: 'Demo User' })
      await context.close()
    })

    it('fills in the code from verification_uri_complete; Cancel refuses the device, and the answered page says to start again', async () => {
      const context = await browser.current.newContext()
      const page = await context.newPage()
      const started = await startDevice(device)

      await page.goto(started.verification_uri_complete!)
      await page.waitForURL((url) => url.pathname === '/device')
      const entry = page.url()
      expect(await page.getByLabel('Code').inputValue()).toBe(started.user_code)
      await page.getByRole('button', { name: 'Cancel' }).click()
      await page.waitForURL((url) => url.pathname === '/device-done')
      expect(await page.getByRole('status').textContent()).toBe('Your device was not signed in: The request was refused. You can close this page.')
      expect(await pollLater(started)).toEqual({ error: 'access_denied' })

      const again = await page.goto(entry)
      expect(again?.status()).toBe(409)
      expect(await page.getByRole('alert').textContent()).toMatch(/^This code entry is used up/)
      await page.getByRole('link', { name: 'Enter the code again' }).click()
      await page.waitForURL((url) => url.pathname === '/device' && url.href !== entry)
      expect(await page.getByLabel('Code').inputValue(), 'a new code entry, without a code').toBe('')
      await context.close()
    })
  })
})
