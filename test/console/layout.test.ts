import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { CreatedAccount } from '../support/herald.js'
import { call, createAccount, managementToken } from '../support/http.js'
import { Receiver, eventually } from '../support/receiver.js'
import { Browser as SignInBrowser, LoginApp, authorizationUrl, prepareSignIn, signIn as signInUser } from '../support/sign-in.js'
import { type Delivery, type Endpoint, subscribedEndpoint, webhookApi } from '../webhooks/support.js'
import { type View, forEachConsole, lookAt, newPage, patchSettings, signIn } from './support.js'

// Every page the console routes (Route in console/src/main.tsx), with real data made through the API, on a 390 px
// phone and a 1280 px desktop, and on the phone in dark mode: the page is no wider than the window (wide tables
// scroll in their own box), it throws nothing, and axe-core finds no serious or critical problem. The header folds
// into a Menu button on the phone.

/** Dark at the phone's width: a theme changes colours, not widths, and the phone is where dark is most used. */
const VIEWS: View[] = [
  { width: 390, height: 844, dark: false },
  { width: 1280, height: 800, dark: false },
  { width: 390, height: 844, dark: true },
]

interface Made {
  account: CreatedAccount
  orders: Endpoint
  failing: Delivery
  eventId: string
  relyingParty: string
}

/** A page of the console: where it is, what shows that its data has come, and a button that opens a form on it. */
interface ConsolePage {
  name: string
  path(made: Made): string
  ready(made: Made): string[]
  open?: { button: string; form: string }
}

const PAGES: ConsolePage[] = [
  { name: 'deliveries', path: () => '/', ready: () => ['tr[data-delivery] >> nth=1'] },
  // The schedule still ahead comes from the settings, read beside the delivery.
  { name: 'delivery', path: (made) => `/deliveries/${made.failing.id}`, ready: () => ['.timeline .attempt', '.ahead'] },
  { name: 'endpoints', path: () => '/endpoints', ready: () => ['tr[data-endpoint] >> nth=1'] },
  { name: 'endpoints-add', path: () => '/endpoints', ready: () => ['tr[data-endpoint] >> nth=1'], open: { button: 'Add endpoint', form: 'Add an endpoint' } },
  { name: 'endpoint', path: (made) => `/endpoints/${made.orders.id}`, ready: () => ['[data-activity]', '.chart >> nth=1'] },
  { name: 'events', path: () => '/events', ready: () => ['tr[data-event]'] },
  { name: 'events-publish', path: () => '/events', ready: () => ['tr[data-event]'], open: { button: 'Publish an event', form: 'Publish an event' } },
  { name: 'event', path: (made) => `/events/${made.eventId}`, ready: () => ['tr[data-delivery] >> nth=1', '.payload'] },
  { name: 'event-types', path: () => '/event-types', ready: () => ['tr[data-event-type="order.placed"]'] },
  { name: 'clients', path: () => '/clients', ready: (made) => [`tr[data-client="${made.relyingParty}"]`] },
  { name: 'clients-register', path: () => '/clients', ready: (made) => [`tr[data-client="${made.relyingParty}"]`], open: { button: 'Register a client', form: 'Register a client' } },
  { name: 'client', path: (made) => `/clients/${made.relyingParty}`, ready: () => ['#edit-client-name'] },
  { name: 'client-admin', path: (made) => `/clients/${made.account.clientId}`, ready: () => ['[data-admin-client]', '#edit-client-name'] },
  { name: 'scopes', path: () => '/scopes', ready: () => ['tr[data-scope="invoices:read"]'] },
  { name: 'registration-tokens', path: () => '/registration-tokens', ready: () => ['tr[data-token]'] },
  { name: 'settings', path: () => '/settings', ready: () => ['[data-setting]', 'tr[data-key]'] },
  { name: 'settings-form', path: () => '/settings', ready: () => ['[data-setting]', 'tr[data-key]'], open: { button: 'Edit settings', form: 'Edit settings' } },
  { name: 'users', path: () => '/users?subject=user-1', ready: () => ['tr[data-session]', 'tr[data-consent]'] },
  { name: 'not-found', path: () => '/no-such-page', ready: () => ['text=Page not found'] },
]

/** Follows a console path as the console's own links do (history and popstate): a reload would forget the token. */
async function visit(page: Page, path: string): Promise<void> {
  await page.evaluate(`history.pushState(null, '', '/console${path}'); dispatchEvent(new PopStateEvent('popstate'))`)
}

/** Waits for `selectors`, then until nothing on the page still says it is loading (`Loading…`, or a bare `…`). */
async function settled(page: Page, selectors: string[]): Promise<void> {
  for (const selector of selectors) await page.locator(selector).first().waitFor()
  // Polled from here: waitForFunction would evaluate its string in the page, which the console's CSP refuses.
  await eventually(async () => (await page.locator('main .muted', { hasText: /^(Loading|…)/ }).count()) === 0, 10_000, 'the page to finish loading')
}

/**
 * The page's width as the document scrolls it, and the elements that reach past the window (those in a box that
 * scrolls or clips them aside), named for the failure message.
 */
async function widthOf(page: Page): Promise<{ scrollWidth: number; past: string[] }> {
  return page.evaluate(`(() => {
    const clipped = (element) => {
      for (let box = element.parentElement; box && box !== document.body; box = box.parentElement) if (getComputedStyle(box).overflowX !== 'visible') return true
      return false
    }
    const past = [...document.body.querySelectorAll('*')]
      .filter((element) => element.getBoundingClientRect().right > innerWidth + 0.5 && !clipped(element))
      .slice(0, 5)
      .map((element) => element.tagName.toLowerCase() + (element.className && typeof element.className === 'string' ? '.' + element.className.split(' ').join('.') : ''))
    return { scrollWidth: document.documentElement.scrollWidth, past }
  })()`)
}

/** The smallest axis label of the page's charts, in CSS pixels as drawn (its font size times the SVG's scale). */
async function smallestChartLabel(page: Page): Promise<number> {
  return page.evaluate(`Math.min(...[...document.querySelectorAll('.axis text')].map((text) => {
    const svg = text.ownerSVGElement
    return parseFloat(getComputedStyle(text).fontSize) * svg.getBoundingClientRect().width / svg.viewBox.baseVal.width
  }))`)
}

forEachConsole('every console page fits a phone and a desktop, light and dark, in Chromium', (dialect, h, browser) => {
  let made: Made
  let receiver: Receiver

  beforeAll(async () => {
    const account = await createAccount(h.current, 'acme')
    // A failed attempt is retried a day later: the failing delivery stays pending, with the schedule still ahead.
    await patchSettings(account, { webhook_retry_schedule: [86_400] })
    receiver = await Receiver.start((request) => (request.path.endsWith('/fail') ? { status: 500, body: 'the database is down' } : { status: 204 }))
    const api = await webhookApi(account, h.current.clock)
    const orders = await subscribedEndpoint(api, receiver.url, ['order.*'], { description: 'Order sync for the warehouse' })
    await subscribedEndpoint(api, `${receiver.url}/fail`, ['*'], { description: 'Audit log' })
    const event = await api.post<{ id: string }>('/webhooks/events', { type: 'order.placed', data: { order_id: 'ord_1042', lines: [{ sku: 'WIDGET-7', quantity: 3 }] } })
    const deliveries = await eventually(async () => {
      const listed = await api.get<{ data: Delivery[] }>('/webhooks/deliveries')
      return listed.body.data.length === 2 && listed.body.data.every((delivery) => delivery.attempt_count === 1) && listed.body.data
    })
    const token = await managementToken(account)
    expect((await call(`${account.base}/oauth/scopes`, 'POST', { token, json: { name: 'invoices:read', description: 'Read invoices' } })).status).toBe(201)
    const registrationToken = await call(`${account.base}/oauth/registration-tokens`, 'POST', { token, json: { expires_in: 86_400, max_uses: 5 } })
    expect(registrationToken.status, registrationToken.text).toBe(201)
    const relyingParty = await prepareSignIn(account)
    await signInUser(new SignInBrowser(), await LoginApp.of(account), authorizationUrl(account.base, relyingParty.clientId), 'user-1', { remember: true })
    made = { account, orders, failing: deliveries.find((delivery) => delivery.status === 'pending')!, eventId: event.body.id, relyingParty: relyingParty.clientId }
  })
  afterAll(async () => {
    await receiver?.close()
  })

  for (const view of VIEWS) {
    describe(`${view.width} × ${view.height}, ${view.dark ? 'dark' : 'light'}`, () => {
      let page: Page
      const errors: string[] = []

      beforeAll(async () => {
        page = await newPage(browser, { viewport: { width: view.width, height: view.height }, colorScheme: view.dark ? 'dark' : 'light' })
        page.on('pageerror', (error) => errors.push(error.message))
      })
      afterAll(async () => {
        await page?.context().close()
      })

      /** The page as it is now: no wider than the window, nothing thrown, nothing serious for axe-core. */
      async function check(name: string): Promise<void> {
        const { scrollWidth, past } = await widthOf(page)
        expect(scrollWidth, `${name} at ${view.width} px reaches past the window: ${past.join(', ')}`).toBeLessThanOrEqual(view.width)
        expect(errors).toEqual([])
        // Native date pickers and selects are drawn for the dark background: their icons stay visible.
        if (view.dark) expect(await page.evaluate(`[...document.querySelectorAll('input, select, textarea')].map((field) => getComputedStyle(field).colorScheme).filter((scheme) => scheme !== 'dark')`)).toEqual([])
        await lookAt(page, dialect, name, view)
      }

      it('fits the sign-in page', async () => {
        await page.goto(`${h.current.origin}/console/`)
        await page.getByRole('button', { name: 'Sign in' }).waitFor()
        await check('sign-in')
        await signIn(page, made.account, made.account.clientId, made.account.clientSecret)
      })

      for (const target of PAGES) {
        it(`fits the ${target.name} page`, async () => {
          await visit(page, target.path(made))
          await settled(page, target.ready(made))
          if (target.open) {
            await page.getByRole('button', { name: target.open.button }).click()
            await page.getByRole('form', { name: target.open.form }).waitFor()
          }
          await check(target.name)
          if (target.name === 'endpoint') expect(await smallestChartLabel(page)).toBeGreaterThanOrEqual(11)
        })
      }

      if (view.width < 760) {
        it('folds the sections into a Menu button, which opens, and closes on a choice or on Escape', async () => {
          const menu = page.getByRole('button', { name: 'Menu' })
          const nav = page.getByRole('navigation', { name: 'Console' })
          expect(await menu.getAttribute('aria-expanded')).toBe('false')
          expect(await nav.isVisible()).toBe(false)
          await menu.focus()
          await page.keyboard.press('Enter')
          expect(await menu.getAttribute('aria-expanded')).toBe('true')
          await nav.getByRole('link', { name: 'Settings' }).waitFor()
          await check('menu')
          // The panel follows its button: the next Tab is its first section.
          await page.keyboard.press('Tab')
          expect(await page.evaluate('document.activeElement.textContent')).toBe('Deliveries')
          await page.keyboard.press('Escape')
          expect(await menu.getAttribute('aria-expanded')).toBe('false')
          expect(await page.evaluate('document.activeElement.textContent')).toBe('Menu')

          await menu.click()
          await nav.getByRole('link', { name: 'Events' }).click()
          await page.getByRole('heading', { name: 'Events' }).waitFor()
          expect(await menu.getAttribute('aria-expanded')).toBe('false')
          expect(await nav.isVisible()).toBe(false)
        })
      } else {
        it('shows the sections in the header, without a Menu button', async () => {
          expect(await page.getByRole('button', { name: 'Menu' }).isVisible()).toBe(false)
          expect(await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Settings' }).isVisible()).toBe(true)
        })
      }
    })
  }
})
