/**
 * Debian's Chromium for the browser tests, driven by playwright-core: no browser is ever downloaded.
 * A test passes `skip: chromiumSkip` so that it is skipped with a message where Chromium is missing
 * (CI installs it: `apt-get install chromium`).
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** Where Debian's package installs Chromium. */
export const CHROMIUM = '/usr/bin/chromium';

/** Headless, no sandbox (containers), and none of the browser's own background traffic. */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

/**
 * Settings every browser test's proxy takes. The proxy shares its process with the test (and the machine
 * with Chromium and the other test files), whose event loop a loaded machine delays: load shedding by
 * event-loop delay would then refuse the page's calls with 503 `overloaded`, which is not what these
 * tests look at. Shedding is tested where a test sets its thresholds (test/resilience.test.ts).
 */
export const BROWSER_TEST_PROXY_ENV = { LOAD_SHED_EVENT_LOOP_DELAY_MS: '0' } as const;

/** The git-ignored folder for screenshots. */
export const TEST_OUTPUT = fileURLToPath(new URL('../../test-output/', import.meta.url));

/** `false` when Chromium is installed, else the reason the browser tests are skipped. */
export const chromiumSkip: false | string = existsSync(CHROMIUM)
  ? false
  : `Chromium is not installed at ${CHROMIUM}: install it with "apt-get install -y chromium" (CI does); this test never downloads a browser`;

/** Polls `probe` every 50 ms until it gives a value other than `undefined`. */
export async function waitFor<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, timeoutMs = 10_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
