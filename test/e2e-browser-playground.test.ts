/**
 * The playground in a real browser (Debian's Chromium driven by playwright-core, see
 * helpers/chromium.ts) against the proxy with the embedded sandbox:
 *
 * - the second-factor login of spec 3.2: `2fa@example.com` answers `type: "two_factor_code"`, the
 *   page asks for the code, a wrong code shows the pre-authentication message (never the session
 *   wording, no forced logout), `123456` opens the session. Screenshot of the step:
 *   test-output/playground-2fa.png;
 * - a manual logout leaves a clean page: in-flight calls of the old session (a deposit being polled)
 *   do not turn into a forced logout, and no profile, wallet, deposit or games data stays; a
 *   forced-logout banner still showing is taken away by it;
 * - no request of the page answers 404 (the page has an inline icon; `/favicon.ico` is served
 *   outside production);
 * - the fault control: one BFF endpoint made to hang through the sandbox's fault rules holds the
 *   wallet load while other routes still answer; clearing it releases the held call with its real
 *   answer; a failing rule is listed and "Clear all" removes it.
 *
 * Skipped with a message when Chromium is not installed.
 */
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { createServer } from '../src/app.js';
import { getError } from '../src/errors/index.js';
import { BROWSER_TEST_PROXY_ENV, chromiumSkip, launchChromium, TEST_OUTPUT } from './helpers/chromium.js';

const PASSWORD = 'Demo#2026';
const SESSION_WORDING = /session|log in again/i;

let app: FastifyInstance;
let base: string;
let browser: Browser | undefined;

before(async () => {
  if (chromiumSkip) return;
  app = await createServer({ ...BROWSER_TEST_PROXY_ENV, NODE_ENV: 'development', LOG_LEVEL: 'silent' });
  base = await app.listen({ port: 0, host: '127.0.0.1' });
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await app?.close();
});

/** A fresh browser profile on the playground page, recording what the page asks and what goes wrong. */
async function openPlayground(): Promise<{
  context: BrowserContext;
  page: Page;
  pageErrors: string[];
  notFound: string[];
  calls: { method: string; path: string; status: number }[];
}> {
  assert.ok(browser);
  // English pages: the assertions read the registry's (English) messages.
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, locale: 'en-US' });
  const page = await context.newPage();
  const pageErrors: string[] = [];
  const notFound: string[] = [];
  const calls: { method: string; path: string; status: number }[] = [];
  page.on('pageerror', (error) => pageErrors.push(error.message));
  page.on('response', (response) => {
    const path = new URL(response.url()).pathname;
    if (response.status() === 404) notFound.push(path);
    calls.push({ method: response.request().method(), path, status: response.status() });
  });
  await page.goto(`${base}/playground`);
  await page.waitForSelector('body[data-ready="true"]');
  return { context, page, pageErrors, notFound, calls };
}

async function text(page: Page, selector: string): Promise<string> {
  return ((await page.textContent(selector)) ?? '').trim();
}

async function logIn(page: Page, login: string): Promise<void> {
  await page.fill('#login', login);
  await page.fill('#password', PASSWORD);
  await page.click('#login-button');
}

const USER_FIELDS = [
  '#profile-name',
  '#profile-email',
  '#profile-id',
  '#wallet-balance',
  '#wallet-bonus',
  '#deposit-id',
  '#deposit-status',
  '#deposit-code',
];

describe('playground in Chromium', { skip: chromiumSkip, timeout: 90_000 }, () => {
  test('second-factor login: the code step, a wrong code with the pre-authentication message, 123456 opens the session', async () => {
    const { context, page, pageErrors, notFound, calls } = await openPlayground();
    try {
      const icon = await page.getAttribute('link[rel="icon"]', 'href');
      assert.match(icon ?? '', /^data:image\/svg\+xml,/, 'an inline icon');
      assert.equal(await page.isHidden('#two-factor-form'), true, 'no code step before a login asks for it');

      // The login answers type: "two_factor_code": the page asks for the code, no session yet.
      await logIn(page, '2fa@example.com');
      await page.waitForSelector('#two-factor-form', { state: 'visible' });
      assert.equal(await page.getAttribute('body', 'data-step'), 'two-factor');
      assert.equal(await text(page, '#status'), 'Signed out');
      assert.equal(await page.isDisabled('#login'), true, 'the credentials wait for their code');
      assert.equal(await page.isDisabled('#password'), true);
      assert.match(await text(page, '#two-factor-prompt'), /verification code/i);
      assert.equal(await page.getAttribute('#two-factor-code', 'autocomplete'), 'one-time-code');
      assert.equal(
        (await context.cookies(base)).find((c) => c.name === 'access_token'),
        undefined,
        'no session cookie yet',
      );

      // A wrong code: the pre-authentication message with its reference, the step stays, no forced logout.
      await page.fill('#two-factor-code', '111111');
      await page.click('#two-factor-button');
      await page.waitForFunction(() => document.getElementById('two-factor-result')?.className === 'error');
      const wrong = await text(page, '#two-factor-result');
      assert.ok(wrong.startsWith(getError('EM0005').preAuthMessage), wrong);
      assert.match(wrong, /#EP0700-EM0005/);
      assert.doesNotMatch(wrong, SESSION_WORDING);
      assert.equal(await page.isHidden('#forced'), true, 'no forced-logout banner');
      assert.equal(await page.isVisible('#two-factor-form'), true);

      await page.fill('#two-factor-code', '123456');
      mkdirSync(TEST_OUTPUT, { recursive: true });
      await page.screenshot({ path: join(TEST_OUTPUT, 'playground-2fa.png'), fullPage: true });

      // The right code: the session opens, the step closes, the user's data loads.
      await page.click('#two-factor-button');
      await page.waitForSelector('#status[data-state="in"]');
      await page.waitForFunction(() => document.getElementById('profile-id')?.textContent !== '–');
      assert.equal(await text(page, '#profile-email'), '2fa@example.com');
      assert.equal(await page.isHidden('#two-factor-form'), true);
      assert.equal(await page.getAttribute('body', 'data-step'), null);
      assert.equal(await page.isDisabled('#login'), false);
      assert.equal(await text(page, '#login-result'), 'Logged in.');
      const session = (await context.cookies(base)).find((c) => c.name === 'access_token');
      assert.ok(session?.httpOnly, 'the HttpOnly session cookie is set');

      const logins = calls.filter((c) => c.path === '/api/auth/login').map((c) => c.status);
      assert.deepEqual(logins, [200, 401, 200], 'asked for the code, refused the wrong one, accepted 123456');
      assert.equal(calls.filter((c) => c.path === '/api/logs/auth-logout' || c.path === '/api/auth/logout').length, 0);
      assert.deepEqual(notFound, []);
      assert.deepEqual(pageErrors, []);
    } finally {
      await context.close();
    }
  });

  test('manual logout: no forced-logout banner, even with a deposit being polled, and no stale data', async () => {
    const { context, page, pageErrors, notFound, calls } = await openPlayground();
    try {
      // Signed in, with the profile, the wallet and the games shown and a PIX deposit being polled.
      await logIn(page, 'demo@example.com');
      await page.waitForSelector('#status[data-state="in"]');
      await page.waitForFunction(() => document.getElementById('profile-id')?.textContent !== '–');
      await page.click('#games');
      await page.waitForSelector('#games-list li');
      await page.click('#deposit');
      await page.waitForSelector('body[data-deposit-status="pending"]');
      assert.match(await text(page, '#deposit-id'), /\S/);

      // Log out while the deposit is still polled.
      const before = calls.length;
      await page.click('#logout');
      await page.waitForFunction(() => document.getElementById('login-result')?.textContent === 'Logged out.');
      // Longer than the page's poll interval (1 s) and the sandbox's payment (2nd poll): a poll left
      // running would fail with 401 no_token and show a forced logout by now.
      await page.waitForTimeout(2500);

      assert.equal(await page.isHidden('#forced'), true, 'no forced-logout banner');
      assert.equal(await page.getAttribute('body', 'data-forced-ref'), null);
      assert.equal(await text(page, '#status'), 'Signed out');
      assert.equal(await page.getAttribute('body', 'data-session'), 'out');
      for (const field of USER_FIELDS) assert.equal(await text(page, field), '–', `${field} is cleared`);
      assert.equal(await page.locator('#games-list li').count(), 0, 'no games left on the page');
      assert.equal(await text(page, '#games-result'), '');
      assert.equal(await text(page, '#account-result'), '');
      assert.equal(await page.getAttribute('body', 'data-deposit-status'), null);
      for (const id of ['#load-account', '#deposit', '#refresh-now', '#expire']) {
        assert.equal(await page.isDisabled(id), true, `${id} waits for a login`);
      }
      const after = calls.slice(before);
      assert.deepEqual(
        after.filter((c) => c.path === '/api/auth/logout').map((c) => c.status),
        [200],
      );
      assert.equal(calls.filter((c) => c.path === '/api/logs/auth-logout').length, 0, 'no beacon');
      assert.deepEqual(
        after.filter((c) => c.status === 401),
        [],
        'no call of the old session failed after the logout',
      );
      assert.equal(
        (await context.cookies(base)).find((c) => c.name === 'access_token'),
        undefined,
        'the cookie is cleared',
      );

      // A forced-logout banner still showing is taken away by a manual logout.
      await logIn(page, 'demo@example.com');
      await page.waitForSelector('#status[data-state="in"]');
      await page.waitForFunction(() => document.getElementById('profile-id')?.textContent !== '–');
      await page.click('#expire');
      await page.waitForFunction(() => document.getElementById('log')?.textContent?.includes('the sandbox expired 1 session'));
      await page.click('#load-account');
      await page.waitForSelector('#forced', { state: 'visible' });
      assert.match(await text(page, '#forced-ref'), /^#EP07(02|10)-EM0003$/);
      await page.click('#logout');
      await page.waitForFunction(() => document.getElementById('login-result')?.textContent === 'Logged out.');
      assert.equal(await page.isHidden('#forced'), true, 'the banner is gone');
      assert.equal(await text(page, '#forced-ref'), '');
      assert.equal(await page.getAttribute('body', 'data-forced-ref'), null);
      for (const field of USER_FIELDS) assert.equal(await text(page, field), '–', `${field} is cleared`);
      assert.equal(calls.filter((c) => c.path === '/api/logs/auth-logout').length, 1, 'only the one real forced logout sent a beacon');

      assert.deepEqual(notFound, []);
      assert.deepEqual(pageErrors, []);
    } finally {
      await context.close();
    }
  });

  test('fault control: a hung endpoint holds its call, other routes answer, clearing releases it', async () => {
    const { context, page, pageErrors, notFound, calls } = await openPlayground();
    try {
      await page.waitForSelector('body[data-faults="0"]');
      assert.equal(await page.isDisabled('#fault-delay'), false, 'slow is the default and takes a delay');
      await page.selectOption('#fault-kind', 'hang');
      assert.equal(await page.isDisabled('#fault-delay'), true, 'a hang has no delay');

      await logIn(page, 'demo@example.com');
      await page.waitForSelector('#status[data-state="in"]');
      await page.waitForFunction(() => document.getElementById('account-result')?.textContent === 'Up to date.');

      // The wallet's BFF endpoint hangs: the load waits, the game list (another endpoint) still answers.
      await page.fill('#fault-path', '/users/wallet');
      await page.click('#fault-apply');
      await page.waitForSelector('body[data-faults="1"]');
      assert.match(await text(page, '#fault-list'), /\/users\/wallet: hangs/);
      assert.match(await text(page, '#fault-result'), /now hangs/);
      await page.click('#load-account');
      await page.click('#games');
      await page.waitForSelector('#games-list li');
      await page.click('#fault-refresh');
      await page.waitForFunction(() => /held now 1/.test(document.getElementById('fault-list')?.textContent ?? ''));
      assert.equal(await text(page, '#account-result'), 'Loading…', 'the wallet call is held');

      // Clearing the path releases the held call with its real answer.
      await page.click('#fault-clear');
      await page.waitForSelector('body[data-faults="0"]');
      await page.waitForFunction(() => document.getElementById('account-result')?.textContent === 'Up to date.');
      assert.match(await text(page, '#fault-result'), /cleared 1 fault\(s\) of \/users\/wallet; 1 held request\(s\) released/);

      // A failing rule is listed; "Clear all" removes it.
      await page.fill('#fault-path', '/wallet/charge/*');
      await page.selectOption('#fault-kind', 'fail');
      await page.click('#fault-apply');
      await page.waitForSelector('body[data-faults="1"]');
      assert.match(await text(page, '#fault-list'), /\/wallet\/charge\/\*: fails 503/);
      await page.click('#fault-clear-all');
      await page.waitForSelector('body[data-faults="0"]');
      assert.equal(await page.locator('#fault-list li').count(), 0);

      const faultCalls = calls.filter((c) => c.path === '/api/dev/proxy/__sandbox/faults');
      assert.ok(faultCalls.length >= 6 && faultCalls.every((c) => c.status === 200 || c.status === 201), JSON.stringify(faultCalls));
      assert.equal(await page.isHidden('#forced'), true, 'no forced logout');
      assert.deepEqual(notFound, []);
      assert.deepEqual(pageErrors, []);
    } finally {
      await context.close();
    }
  });
});
