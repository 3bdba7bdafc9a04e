import { existsSync } from 'node:fs'
import { type Browser, chromium } from 'playwright-core'
import { afterAll, beforeAll, it } from 'vitest'

// Browser tests drive Debian's Chromium (apt-get install chromium) through playwright-core. Where it is missing they
// skip with a warning, unless CI or HERALD_TEST_BROWSER=required makes that a failure.

export const CHROMIUM = '/usr/bin/chromium'
const BROWSER_REQUIRED = Boolean(process.env.CI) || process.env.HERALD_TEST_BROWSER === 'required'

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} is missing and the browser test is required (CI or HERALD_TEST_BROWSER=required): apt-get install chromium`)
  }
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  })
}

/**
 * Runs `suite` with one Chromium for the file (read `.current` inside tests), or, where there is no Chromium and
 * none is required, registers a single skipped test named `title` that says how to get one.
 */
export function withChromium(title: string, suite: (browser: { readonly current: Browser }) => void): void {
  if (!existsSync(CHROMIUM) && !BROWSER_REQUIRED) {
    it(title, (context) => {
      // The default reporter doesn't show a skip's note, so it goes to the console as well.
      const why = `${CHROMIUM} is missing: apt-get install chromium to run the browser tests (CI or HERALD_TEST_BROWSER=required make this a failure)`
      console.warn(`!! ${why}`)
      context.skip(why)
    })
    return
  }
  let browser: Browser | undefined
  beforeAll(async () => {
    browser = await launchChromium()
  })
  afterAll(async () => {
    await browser?.close()
  })
  suite({
    get current(): Browser {
      if (!browser) throw new Error('Chromium is not started yet: use it inside a test or hook')
      return browser
    },
  })
}
