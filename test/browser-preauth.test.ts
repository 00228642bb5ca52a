/**
 * Pre-authentication failures in the browser SDK (spec 5.5, 7.4.4), over real sockets: the proxy with
 * its embedded sandbox on a loopback port, the SDK's client with Node's fetch and a cookie jar in
 * place of the browser's. A wrong password or second-factor code at login is a form-level failure:
 * the pre-authentication message of its EM row, never the session wording, and no forced logout (no
 * beacon, no logout call, no callback, a session already there stays). A 401 of an ended session on
 * an authenticated route keeps the session wording and forces the logout once.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { createServer } from '../src/app.js';
import { createProxyClient, memoryStorage, ProxyError } from '../packages/browser/src/browser/index.js';
import { getError } from '../src/errors/index.js';

const SESSION_WORDING = /session|log in again/i;
const DEMO = { login: 'demo@example.com', password: 'Demo#2026' };

let app: FastifyInstance;
let base: string;

before(async () => {
  app = await createServer({ NODE_ENV: 'test', LOG_LEVEL: 'silent' });
  base = await app.listen({ port: 0, host: '127.0.0.1' });
});
after(async () => {
  await app.close();
});

/**
 * Node's fetch with what a browser adds: a cookie jar for the proxy's origin (the HttpOnly session
 * cookie is stored and sent back, and cleared by `Max-Age=0`). Records each request's method, path
 * and answer status.
 */
function browserLikeFetch() {
  const jar = new Map<string, string>();
  const seen: { method: string; path: string; status: number }[] = [];
  const fetchImpl = (async (input: RequestInfo | URL, init: RequestInit = {}) => {
    const headers = new Headers(init.headers);
    if (jar.size > 0) headers.set('cookie', [...jar].map(([k, v]) => `${k}=${v}`).join('; '));
    const res = await fetch(input, { ...init, headers });
    for (const line of res.headers.getSetCookie()) {
      const [pair = '', ...attributes] = line.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      const gone = value === '' || attributes.some((a) => /^\s*max-age\s*=\s*0\s*$/i.test(a));
      if (gone) jar.delete(name);
      else jar.set(name, value);
    }
    seen.push({ method: init.method ?? 'GET', path: new URL(String(input)).pathname, status: res.status });
    return res;
  }) as typeof fetch;
  return {
    fetch: fetchImpl,
    jar,
    seen,
    count: (path: string) => seen.filter((s) => s.path === path).length,
  };
}

function makeClient() {
  const browser = browserLikeFetch();
  const forced: string[] = [];
  const client = createProxyClient({
    baseUrl: base,
    fetch: browser.fetch,
    sendBeacon: null, // no navigator in Node: the beacon goes through fetch with keepalive
    storage: memoryStorage(),
    pathname: () => '/login',
    // The registry's messages are the English table; other locales: browser-messages.test.ts.
    locale: 'en',
    onForcedLogout: (ref) => forced.push(ref),
  });
  return { client, forced, browser };
}

async function rejection(promise: Promise<unknown>): Promise<ProxyError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof ProxyError, `expected a ProxyError, got ${String(error)}`);
    return error;
  }
  assert.fail('the call succeeded');
}

/** Lets a beacon sent without waiting reach the proxy, if one was sent. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 100));

describe('pre-authentication failures (spec 7.4.4)', () => {
  test('a wrong password at login: the pre-authentication message, no forced logout', async () => {
    const { client, forced, browser } = makeClient();
    const e = await rejection(client.auth.login({ body: { login: DEMO.login, password: 'not-the-password' } }));
    await settle();
    assert.equal(e.status, 401);
    assert.equal(e.envelopeError, 'invalid_credentials', 'the form-level error code of the proxy');
    assert.equal(e.ref, 'EP0700-EM0005');
    assert.equal(e.preAuth, true);
    assert.equal(e.message, getError('EM0005').preAuthMessage);
    assert.doesNotMatch(e.message, SESSION_WORDING);
    assert.notEqual(e.message, getError('EM0005').message);
    assert.deepEqual(forced, []);
    assert.equal(client.forcedLogoutFired, false);
    assert.equal(browser.count('/api/logs/auth-logout'), 0, 'no beacon');
    assert.equal(browser.count('/api/auth/logout'), 0, 'no logout call');
    assert.equal(client.hasSession, false);
    assert.equal(browser.jar.size, 0, 'no cookie was set');
  });

  test('the second factor: a wrong code gets the pre-authentication message, the right one opens the session', async () => {
    const { client, forced, browser } = makeClient();
    const login = { login: '2fa@example.com', password: DEMO.password };
    const first = await client.auth.login({ body: login });
    assert.equal(first.type, 'two_factor_code');
    assert.equal(client.hasSession, false);
    const e = await rejection(client.auth.login({ body: { ...login, two_factor_code: 111111 } }));
    assert.deepEqual([e.status, e.envelopeError, e.ref, e.preAuth], [401, 'invalid_two_factor_code', 'EP0700-EM0005', true]);
    assert.equal(e.message, getError('EM0005').preAuthMessage);
    const done = await client.auth.login({ body: { ...login, two_factor_code: 123456 } });
    assert.equal(done.type, undefined);
    assert.equal(done.user?.email, '2fa@example.com');
    assert.equal(client.hasSession, true);
    assert.equal((await client.auth.profile()).user.email, '2fa@example.com');
    await settle();
    assert.deepEqual(forced, []);
    assert.equal(browser.count('/api/logs/auth-logout') + browser.count('/api/auth/logout'), 0);
  });

  test('a failed login while signed in leaves the session alone, also through request() with session: true', async () => {
    const { client, forced, browser } = makeClient();
    await client.auth.login({ body: DEMO });
    assert.equal(client.hasSession, true);
    const viaRoute = await rejection(client.auth.login({ body: { login: DEMO.login, password: 'wrong' } }));
    const viaRequest = await rejection(
      client.request('POST', '/api/auth/login', { session: true, body: { login: DEMO.login, password: 'wrong' } }),
    );
    for (const e of [viaRoute, viaRequest]) {
      assert.equal(e.preAuth, true);
      assert.equal(e.ref, 'EP0700-EM0005');
      assert.equal(e.message, getError('EM0005').preAuthMessage);
    }
    await settle();
    assert.deepEqual(forced, []);
    assert.equal(browser.count('/api/logs/auth-logout') + browser.count('/api/auth/logout'), 0);
    assert.equal(client.hasSession, true);
    assert.equal((await client.auth.profile()).user.email, DEMO.login, 'the session cookie still works');
  });

  test('every pre-authentication route: a 401 of a session family reads as the details entered, never logs out', async () => {
    const { client, forced, browser } = makeClient();
    // The sandbox BFF answers the next call of each path with a 401 whose reason is a session family's.
    const rules = [
      { method: 'POST', path: '/auth/login', status: 401, body: { reason: 'token_expired' } },
      { method: 'POST', path: '/bff/register-simplified', status: 401, body: { reason: 'ip_changed' } },
      { method: 'POST', path: '/auth/passwords/reset/validate-code', status: 401, body: { reason: 'token_expired' } },
      { method: 'POST', path: '/bff/social/google', status: 401, body: { reason: 'invalid_token' } },
      { method: 'POST', path: '/documents/validate', status: 401, body: { reason: 'no_token' } },
    ];
    const injected = await fetch(`${app.sandboxUrls?.BFF_BASE_URL ?? ''}/__sandbox/fail-next`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(rules),
    });
    assert.ok(injected.ok, `fail-next answered ${injected.status}`);
    const failures = [
      await rejection(client.auth.login({ body: DEMO })),
      await rejection(
        client.auth.register({
          body: { email: 'new-user@example.com', password: 'Secret#2026', country: 'BR', nationalities: '["BR"]', optIn: true },
        }),
      ),
      await rejection(client.auth.recovery({ body: { step: 'validate-code', login: DEMO.login, code: '000000' } })),
      await rejection(client.auth.social({ params: { provider: 'google' }, body: { token: 'provider-token' } })),
      await rejection(client.auth.validateDocument({ body: { number: '52998224725' } })),
    ];
    await settle();
    assert.deepEqual(
      failures.map((e) => e.ref),
      ['EP0700-EM0003', 'EP0703-EM0006', 'EP0705-EM0003', 'EP0706-EM0002', 'EP0707-EM0001'],
    );
    for (const e of failures) {
      assert.equal(e.status, 401, e.ref);
      assert.equal(e.preAuth, true, e.ref);
      assert.equal(e.message, getError(e.errorCode).preAuthMessage, e.ref);
      assert.doesNotMatch(e.message, SESSION_WORDING, `${e.ref}: ${e.message}`);
    }
    assert.deepEqual(forced, []);
    assert.equal(client.forcedLogoutFired, false);
    assert.equal(browser.count('/api/logs/auth-logout') + browser.count('/api/auth/logout'), 0, 'no beacon, no logout');
  });
});

describe('session failures on authenticated routes keep the session wording', () => {
  test('an expired session: 401 token_expired on the wallet reads "session has expired" and forces the logout once', async () => {
    const { client, forced, browser } = makeClient();
    await client.auth.login({ body: DEMO });
    const expired = await fetch(`${app.sandboxUrls?.BFF_BASE_URL ?? ''}/__sandbox/sessions/expire`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: DEMO.login }),
    });
    assert.equal(expired.status, 200);
    const e = await rejection(client.wallet.refresh());
    await settle();
    assert.deepEqual([e.status, e.reason, e.ref, e.preAuth], [401, 'token_expired', 'EP0710-EM0003', false]);
    assert.equal(e.message, getError('EM0003').message);
    assert.match(e.message, /session has expired/);
    assert.deepEqual(forced, ['EP0710-EM0003']);
    assert.deepEqual(
      browser.seen.filter((s) => s.path === '/api/logs/auth-logout' || s.path === '/api/auth/logout').map((s) => `${s.path} ${s.status}`),
      ['/api/logs/auth-logout 204', '/api/auth/logout 200'],
      'one beacon, one logout',
    );
    assert.equal(client.hasSession, false);
    assert.equal(browser.jar.size, 0, 'the logout cleared the cookie');
  });

  test('no session cookie: 401 no_token on the profile reads "session has ended"; a guest is not forced out, only signed out', async () => {
    const { client, forced } = makeClient();
    const e = await rejection(client.auth.profile());
    assert.deepEqual([e.status, e.reason, e.ref, e.preAuth], [401, 'no_token', 'EP0702-EM0001', false]);
    assert.equal(e.message, getError('EM0001').message);
    assert.match(e.message, /session has ended/);
    assert.deepEqual(forced, [], 'no forced logout for a page that never had a session');
    assert.equal(client.session.status, 'signedOut');
  });
});
