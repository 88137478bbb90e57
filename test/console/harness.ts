// What the console's browser tests share: Debian's Chromium driven by playwright-core, the console built as
// `npm start` builds it, an app on a real socket, a fresh browser profile per test, and signing in.
import fs from 'node:fs'
import path from 'node:path'
import type { AddressInfo } from 'node:net'
import type { Test } from 'tap'
import { chromium, type Browser, type Page } from 'playwright-core'
import { build, ROOT, type BuildTestOptions, type TestUser } from '../helper.js'
import type { App } from '../../src/app.js'
import { consoleBuilt } from './built.js'
import { needsPrograms } from '../system-tools.js'
import { atSuiteEnd } from '../suite.js'

export const CHROMIUM = '/usr/bin/chromium'
/** where the tests leave screenshots of the pages they saw (for the docs) */
export const SHOTS = path.join(ROOT, 'dist', 'console-screenshots')

export const DESKTOP = { width: 1280, height: 800 }
export const PHONE = { width: 390, height: 844 }

/** The page's globals, typed here without the DOM library (the tests' own code runs in Node). */
export type PageGlobals = { __xss?: number; innerWidth: number
  document: { cookie: string; documentElement: { scrollWidth: number } } }

export interface Harness {
  app: App
  /** the app's address, `http://127.0.0.1:<port>` */
  base: string
  browser: Browser
  /** A fresh browser profile with the page open at `url`; scripts' errors and dialogs fail the test. */
  open(t: Test, url: string, viewport?: { width: number; height: number }): Promise<Page>
  signIn(page: Page, user: TestUser): Promise<void>
  /** a full-page screenshot saved as dist/console-screenshots/<name>.png */
  shot(page: Page, name: string): Promise<void>
}

let shared: Promise<Browser> | undefined

/**
 * One Chromium for the browser test files of a suite (test/suite.ts), closed when the suite is done, or for one
 * file run alone: each test has a browser context of its own, with its own cookies and storage.
 */
function sharedBrowser(t: Test): Promise<Browser> {
  if (shared) return shared
  const launched = chromium.launch({
    executablePath: CHROMIUM, headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
      '--disable-component-update']
  })
  shared = launched
  atSuiteEnd(t, async () => {
    shared = undefined
    await (await launched).close()
  })
  return launched
}

/**
 * The browser and an app for one test file, or undefined when Chromium is missing (the file then skips in one line,
 * except under CI=true, where it fails). Rate limits are off: a browser test is one person clicking quickly.
 */
export async function harness(t: Test, options: BuildTestOptions = {}): Promise<Harness | undefined> {
  if (!needsPrograms(t, [CHROMIUM], 'apt-get install chromium')) return undefined
  await consoleBuilt()
  fs.mkdirSync(SHOTS, { recursive: true })
  const browser = await sharedBrowser(t)
  const app = await build(t, { ...options, config: { rateLimits: { knowledge: 0, voiceNotes: 0, artifacts: 0,
    default: 0 }, ...options.config } })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`

  async function open(tt: Test, url: string, viewport = DESKTOP): Promise<Page> {
    const context = await browser.newContext({ viewport })
    tt.teardown(() => context.close())
    const page = await context.newPage()
    page.on('dialog', (d) => { tt.fail(`a dialog opened: ${d.message()}`); void d.dismiss() })
    page.on('pageerror', (err) => tt.fail(`script error: ${err.message}`))
    await page.goto(base + url)
    return page
  }
  async function signIn(page: Page, user: TestUser) {
    await page.getByLabel('Email').fill(user.email)
    await page.getByLabel('Password').fill(user.password)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.getByRole('button', { name: 'Sign out' }).waitFor()
  }
  async function shot(page: Page, name: string) {
    await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true })
  }
  return { app, base, browser, open, signIn, shot }
}

/** Whether nothing on the page is wider than its window (no sideways scrolling on a phone). */
export async function fitsWidth(page: Page): Promise<boolean> {
  return page.evaluate(() => {
    const g = globalThis as unknown as PageGlobals
    return g.document.documentElement.scrollWidth <= g.innerWidth + 1
  })
}
