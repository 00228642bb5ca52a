/**
 * The browser proxy client (packages/browser/src/browser/proxy-client.ts) with a fake fetch and a fake sendBeacon:
 * requests (credentials, JSON, paths, queries), error mapping to ProxyError (envelope, passthrough
 * 401/403, raw bodies, network failure → EM0042; EP07xx codes of the proxy routes), the forced-logout
 * rules of spec 5.7 / 7 (which statuses and families, once only under concurrency, re-armed by a
 * login) and the beacon of spec 6.1 (every field, Blob of type application/json, keepalive fallback).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  buildForcedLogoutBeacon,
  createProxyClient,
  type ForcedLogoutBeacon,
  defaultStorage,
  FORCED_LOGOUT_LOCK_LINGER_MS,
  FORCED_LOGOUT_LOCK_NAME,
  type KeyValueStorage,
  memoryStorage,
  nextCheckDelayMs,
  type ProxyClientOptions,
  ProxyError,
  shortUserAgent,
  shouldForceLogout,
} from '../packages/browser/src/browser/index.js';
import { ERROR_LIST, getError } from '../src/errors/index.js';

const ERROR_ROWS_FOR_TEST = ERROR_LIST.map((e) => e.code);

interface Call {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: unknown;
  credentials: string | undefined;
  keepalive: boolean | undefined;
}

type Handler = (call: Call) => Response | Promise<Response>;

function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(body === undefined ? null : JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', ...headers },
  });
}

const LOGIN_OK = { expires_in: 25200, token_type: 'bearer', user: { id: 1001, name: 'Demo' }, userInfo: {} };

/** A fake proxy: `handler` answers non-logout calls; logout and the beacon route answer like the proxy. */
function fakeProxy(handler: Handler = () => json(200, { ok: true })) {
  const calls: Call[] = [];
  const beacons: { url: string; type: string; body: ForcedLogoutBeacon }[] = [];
  let beaconAccepts = true;
  const fetchImpl = (async (input: RequestInfo | URL, init: RequestInit = {}) => {
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries((init.headers as Record<string, string> | undefined) ?? {})) headers[k.toLowerCase()] = v;
    const call: Call = {
      url: String(input),
      method: init.method ?? 'GET',
      headers,
      body: typeof init.body === 'string' ? JSON.parse(init.body) : init.body,
      credentials: init.credentials,
      keepalive: init.keepalive,
    };
    calls.push(call);
    if (call.url.endsWith('/api/auth/logout')) return json(200, { ok: true });
    if (call.url.endsWith('/api/logs/auth-logout')) return new Response(null, { status: 204 });
    return handler(call);
  }) as typeof fetch;
  const sendBeacon = (url: string, data: Blob): boolean => {
    if (!beaconAccepts) return false;
    // Blob.text() is async; the fake keeps the promise's result when it settles.
    const entry = { url, type: data.type, body: undefined as unknown as ForcedLogoutBeacon };
    beacons.push(entry);
    void data.text().then((t) => {
      entry.body = JSON.parse(t) as ForcedLogoutBeacon;
    });
    return true;
  };
  return {
    calls,
    beacons,
    fetch: fetchImpl,
    sendBeacon,
    refuseBeacons() {
      beaconAccepts = false;
    },
    /** Calls other than logout and the beacon. */
    get apiCalls() {
      return calls.filter((c) => !c.url.endsWith('/api/auth/logout') && !c.url.endsWith('/api/logs/auth-logout'));
    },
    get logoutCalls() {
      return calls.filter((c) => c.url.endsWith('/api/auth/logout'));
    },
  };
}

function makeClient(proxy: ReturnType<typeof fakeProxy>, extra: Partial<ProxyClientOptions> = {}) {
  const forced: string[] = [];
  const client = createProxyClient({
    baseUrl: 'https://casino.example',
    fetch: proxy.fetch,
    sendBeacon: proxy.sendBeacon,
    storage: memoryStorage(),
    pathname: () => '/wallet',
    userAgent: 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
    now: () => 1_767_261_600_000,
    // The registry's messages are the English table; other locales: browser-messages.test.ts.
    locale: 'en',
    onForcedLogout: (ref) => forced.push(ref),
    ...extra,
  });
  return { client, forced };
}

/**
 * A lock manager as a browser's Web Locks API behaves for `ifAvailable` requests: one holder per
 * name at a time; a request for a held name gets `null`. Counts grants and refusals by name.
 */
function fakeLocks() {
  const held = new Set<string>();
  const grants = new Map<string, number>();
  const refusals = new Map<string, number>();
  const count = (counts: Map<string, number>, name: string) => counts.set(name, (counts.get(name) ?? 0) + 1);
  return {
    held,
    grants,
    refusals,
    request: async (name: string, options: { ifAvailable?: boolean }, callback: (lock: unknown) => Promise<unknown>) => {
      if (held.has(name) && options.ifAvailable) {
        count(refusals, name);
        return callback(null);
      }
      held.add(name);
      count(grants, name);
      try {
        return await callback({ name });
      } finally {
        held.delete(name);
      }
    },
  };
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

const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

/** A storage holding the signed-in state (as after a login in an earlier page). */
function signedInStorage() {
  const storage = memoryStorage();
  storage.setItem('front-proxy:session', JSON.stringify({ status: 'signedIn', expiresAt: null }));
  return storage;
}

describe('requests', () => {
  test('JSON in and out, credentials included, path and query built from the row', async () => {
    const proxy = fakeProxy(() => json(200, { games: [] }));
    const { client } = makeClient(proxy);
    const games = await client.games.category({
      params: { slug: 'slots & live' },
      query: { page: 2, 'providers[]': ['a', 'b'], skip: undefined },
    });
    assert.deepEqual(games, { games: [] });
    const [c] = proxy.calls;
    assert.equal(c?.url, 'https://casino.example/api/games/category/slots%20%26%20live?page=2&providers%5B%5D=a&providers%5B%5D=b');
    assert.equal(c?.method, 'GET');
    assert.equal(c?.credentials, 'include');
    assert.equal(c?.headers.accept, 'application/json');
    assert.equal(c?.body, undefined);
    assert.equal(c?.headers['content-type'], undefined);

    await client.payments.deposit({ body: { userId: 1001, creditAmount: 5000, paymentMethod: 'pix', currency: 'BRL' } });
    const d = proxy.calls[1];
    assert.equal(d?.url, 'https://casino.example/api/payments/deposit');
    assert.equal(d?.method, 'POST');
    assert.equal(d?.headers['content-type'], 'application/json');
    assert.deepEqual(d?.body, { userId: 1001, creditAmount: 5000, paymentMethod: 'pix', currency: 'BRL' });
  });

  test('a body-less POST sends no body and no content type; 204 resolves undefined', async () => {
    const proxy = fakeProxy(() => new Response(null, { status: 204 }));
    const { client } = makeClient(proxy);
    assert.equal(await client.wallet.refresh(), undefined);
    assert.equal(proxy.calls[0]?.body, undefined);
    assert.equal(proxy.calls[0]?.headers['content-type'], undefined);
  });

  test('the wildcard route takes subPath, each segment encoded; dot segments are refused', async () => {
    const proxy = fakeProxy(() => json(200, {}));
    const { client } = makeClient(proxy);
    await client.sports.coreSportbook({ params: { subPath: 'events/live now' } });
    assert.equal(proxy.calls[0]?.url, 'https://casino.example/api/core-sportbook/events/live%20now');
    await assert.rejects(client.sports.coreSportbook({ params: { subPath: 'a/../b' } }), TypeError);
    await assert.rejects(client.games.category({ params: { slug: '..' } }), TypeError);
  });

  test('FormData bodies are sent as they are (multipart), receipts come back as a Blob', async () => {
    const proxy = fakeProxy((c) =>
      c.url.endsWith('/receipt')
        ? new Response('%PDF-1.4', { status: 200, headers: { 'content-type': 'application/pdf' } })
        : json(200, { ok: true }),
    );
    const { client } = makeClient(proxy);
    const form = new FormData();
    form.append('file', new Blob(['x'], { type: 'image/png' }), 'doc.png');
    await client.user.storeDocument({ body: form });
    assert.ok(proxy.calls[0]?.body instanceof FormData);
    assert.equal(proxy.calls[0]?.headers['content-type'], undefined, 'fetch sets the multipart boundary');
    const receipt = await client.wallet.receipt({ body: { id: 5 } });
    assert.ok(receipt instanceof Blob);
    assert.equal(await receipt.text(), '%PDF-1.4');
  });

  test('an aborted call rejects with the abort error, not a ProxyError', async () => {
    const controller = new AbortController();
    const proxy = fakeProxy(() => {
      controller.abort();
      throw new DOMException('aborted', 'AbortError');
    });
    const { client, forced } = makeClient(proxy);
    await assert.rejects(client.auth.profile({ signal: controller.signal }), (e: Error) => e.name === 'AbortError');
    assert.deepEqual(forced, []);
  });

  test('a call aborted while its 401 comes back rejects with the abort error and forces no logout', async () => {
    const controller = new AbortController();
    const proxy = fakeProxy(() => {
      controller.abort();
      return json(401, { reason: 'token_expired' });
    });
    const { client, forced } = makeClient(proxy);
    await assert.rejects(client.auth.profile({ signal: controller.signal }), (e: Error) => e.name === 'AbortError');
    await tick();
    assert.deepEqual([forced.length, proxy.beacons.length, proxy.logoutCalls.length], [0, 0, 0]);
  });

  test('request() reaches paths outside the list with the same JSON handling', async () => {
    const proxy = fakeProxy(() => json(200, { ok: true, sessions: 1 }));
    const { client } = makeClient(proxy);
    const answer = await client.request<{ sessions: number }>('post', '/api/dev/proxy/__sandbox/sessions/expire', { body: {} });
    assert.equal(answer.sessions, 1);
    assert.equal(proxy.calls[0]?.method, 'POST');
    assert.equal(proxy.calls[0]?.url, 'https://casino.example/api/dev/proxy/__sandbox/sessions/expire');
  });
});

describe('error mapping to ProxyError (spec 7.2-7.4)', () => {
  test('an envelope: status, reason from `error`, detail, EP of the proxy route', async () => {
    const proxy = fakeProxy(() => json(502, { ok: false, error: 'upstream_unavailable', detail: 'The service is unavailable' }));
    const { client } = makeClient(proxy);
    const e = await rejection(client.payments.deposit({ body: { userId: 1, creditAmount: 5000, paymentMethod: 'pix', currency: 'BRL' } }));
    assert.equal(e.status, 502);
    assert.equal(e.reason, 'upstream_unavailable');
    assert.equal(e.envelopeError, 'upstream_unavailable');
    assert.equal(e.detail, 'The service is unavailable');
    assert.equal(e.endpointCode, 'EP0711');
    assert.equal(e.errorCode, 'EM0032');
    assert.equal(e.ref, 'EP0711-EM0032');
    assert.equal(e.method, 'POST');
    assert.equal(e.url, '/api/payments/deposit');
    assert.match(e.message, /unavailable/i);
  });

  test('a passthrough 401 keeps the upstream reason: profile + token_expired → EP0702-EM0003', async () => {
    const proxy = fakeProxy(() => json(401, { reason: 'token_expired', message: 'Token expired' }));
    const { client } = makeClient(proxy);
    const e = await rejection(client.auth.profile());
    assert.deepEqual([e.status, e.reason, e.endpointCode, e.errorCode, e.ref], [401, 'token_expired', 'EP0702', 'EM0003', 'EP0702-EM0003']);
    assert.deepEqual(e.body, { reason: 'token_expired', message: 'Token expired' });
    assert.equal(e.envelopeError, null);
  });

  test('a raw text 401 body is read as the reason (spec 7.3 raw body)', async () => {
    const proxy = fakeProxy(() => new Response('Wrong auth refresh!', { status: 401, headers: { 'content-type': 'text/plain' } }));
    const { client } = makeClient(proxy);
    const e = await rejection(client.wallet.refresh());
    assert.deepEqual([e.reason, e.ref], ['Wrong auth refresh!', 'EP0710-EM0014']);
    assert.equal(e.body, 'Wrong auth refresh!');
  });

  test('an HTML page as the body (an ingress 502) reads as "an HTML page (N bytes)", the page kept in body', async () => {
    const page =
      '<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center>\r\n</body>\r\n</html>\r\n';
    for (const [html, bytes] of [
      [page, Buffer.byteLength(page)],
      [`<!DOCTYPE html><p>Manutenção</p>`, 34],
    ] as const) {
      const proxy = fakeProxy(() => new Response(html, { status: 502, headers: { 'content-type': 'text/html' } }));
      const { client } = makeClient(proxy);
      const e = await rejection(client.games.list());
      assert.equal(e.reason, `an HTML page (${bytes} bytes)`);
      assert.equal(e.body, html);
      assert.equal(e.status, 502);
      assert.match(e.ref, /^EP0717-EM\d{4}$/);
    }
  });

  test("the gate's 401 { reason: no_token } is EM0001; a 403 passthrough is EM0011", async () => {
    const proxy = fakeProxy((c) => (c.url.includes('/api/kyc/') ? json(403, { message: 'forbidden' }) : json(401, { reason: 'no_token' })));
    const { client } = makeClient(proxy);
    assert.equal((await rejection(client.user.loginHistory({ query: { page: 1 } }))).ref, 'EP0712-EM0001');
    assert.equal((await rejection(client.kyc.status())).ref, 'EP0713-EM0011');
  });

  test('a network failure is status 0, reason network_error, EM0042', async () => {
    const proxy = fakeProxy(() => {
      throw new TypeError('Failed to fetch');
    });
    const { client } = makeClient(proxy);
    const e = await rejection(client.auth.profile());
    assert.deepEqual([e.status, e.reason, e.errorCode, e.ref, e.isNetworkFailure], [0, 'network_error', 'EM0042', 'EP0702-EM0042', true]);
    assert.ok(e.cause instanceof TypeError);
    assert.equal(e.body, undefined);
  });

  test('routes outside the EP07xx rows fall back to EP0799; favourites are EP0718', async () => {
    const proxy = fakeProxy(() => json(500, { ok: false, error: 'internal_error', detail: 'x' }));
    const { client } = makeClient(proxy);
    assert.equal((await rejection(client.album.bootstrap())).ref, 'EP0799-EM0031');
    assert.equal((await rejection(client.favorites.list())).ref, 'EP0718-EM0031');
    assert.equal((await rejection(client.auth.refresh())).ref, 'EP0704-EM0031');
  });
});

describe('forced logout rules (spec 5.7, 7.3, 7.4.4; docs/architecture.md "Habits" (habit 9))', () => {
  const cases: [label: string, route: 'profile' | 'login' | 'games', status: number, body: unknown, forces: boolean][] = [
    ['401 no_token (EM0001)', 'profile', 401, { reason: 'no_token' }, true],
    ['401 invalid_token (EM0002)', 'profile', 401, { reason: 'invalid_token' }, true],
    ['401 token_expired (EM0003)', 'profile', 401, { reason: 'token_expired' }, true],
    ['401 revoked (EM0004)', 'profile', 401, { reason: 'revoked' }, true],
    ['401 without a known reason (EM0005)', 'profile', 401, { something: 1 }, true],
    ['401 ip_changed (EM0006)', 'profile', 401, { reason: 'ip_changed' }, true],
    ['401 device_mismatch (EM0007)', 'profile', 401, { reason: 'device_mismatch' }, true],
    ['401 geo_mismatch (EM0008)', 'profile', 401, { reason: 'geo_mismatch' }, true],
    ['401 kyc_required (EM0009)', 'profile', 401, { reason: 'kyc_required' }, true],
    ['401 legacy_version (EM0010)', 'profile', 401, { reason: 'legacy_version' }, true],
    ['401 user_blocked (EM0012)', 'profile', 401, { reason: 'user_blocked' }, true],
    ['401 security_error (EM0013)', 'profile', 401, { reason: 'security_error' }, true],
    ['401 Wrong auth validation 2 (EM0014)', 'profile', 401, 'Wrong auth validation 2', true],
    ['403 (EM0011)', 'profile', 403, { reason: 'token_expired' }, false],
    ['409 (EM0022)', 'profile', 409, { ok: false, error: 'conflict', detail: 'x' }, false],
    ['429 (EM0021)', 'profile', 429, { ok: false, error: 'too_many_requests', detail: 'x' }, false],
    ['500 (EM0031)', 'profile', 500, { ok: false, error: 'internal_error', detail: 'x' }, false],
    ['502 (EM0032)', 'profile', 502, { ok: false, error: 'upstream_unavailable', detail: 'x' }, false],
    ['503 (EM0032)', 'profile', 503, { ok: false, error: 'not_configured', detail: 'x' }, false],
    ['504 (EM0032)', 'profile', 504, { ok: false, error: 'upstream_timeout', detail: 'x' }, false],
    ['400 invalid_request', 'profile', 400, { ok: false, error: 'invalid_request', detail: 'x' }, false],
    ['pre-authentication route: login 401', 'login', 401, { ok: false, error: 'invalid_credentials', detail: 'x' }, false],
    ['pre-authentication route: login 401 token_expired', 'login', 401, { reason: 'token_expired' }, false],
    ['route without a session need: games list 401', 'games', 401, { reason: 'token_expired' }, false],
  ];
  for (const [label, route, status, body, forces] of cases) {
    test(`${label} → ${forces ? 'forced logout' : 'no forced logout'}`, async () => {
      const proxy = fakeProxy(() =>
        typeof body === 'string' ? new Response(body, { status, headers: { 'content-type': 'text/plain' } }) : json(status, body),
      );
      // The rules apply to a session the client believes in (see "the session state decides" below).
      const { client, forced } = makeClient(proxy, { storage: signedInStorage() });
      const call =
        route === 'profile'
          ? client.auth.profile()
          : route === 'login'
            ? client.auth.login({ body: { login: 'demo@example.com', password: 'x' } })
            : client.games.list();
      const e = await rejection(call);
      await tick();
      assert.equal(e.preAuth, route === 'login', 'pre-authentication call');
      const entry = getError(e.errorCode);
      assert.equal(e.message, route === 'login' ? entry.preAuthMessage : entry.message, 'the message of its kind of call');
      assert.equal(forced.length, forces ? 1 : 0, `onForcedLogout for ${e.ref}`);
      assert.equal(proxy.beacons.length, forces ? 1 : 0, 'beacons');
      assert.equal(proxy.logoutCalls.length, forces ? 1 : 0, 'logout calls');
      if (forces) assert.equal(forced[0], e.ref);
    });
  }

  test('a network failure never forces a logout (EM0042)', async () => {
    const proxy = fakeProxy(() => {
      throw new TypeError('Failed to fetch');
    });
    const { client, forced } = makeClient(proxy);
    await rejection(client.auth.profile());
    await rejection(client.wallet.refresh());
    assert.deepEqual([forced.length, proxy.beacons.length, proxy.logoutCalls.length], [0, 0, 0]);
  });

  test('shouldForceLogout: only session routes, never pre-auth, only 401 of a session-ending family', () => {
    const session = { session: true, preAuth: false };
    for (const code of ERROR_ROWS_FOR_TEST) {
      const expected = [
        'EM0001',
        'EM0002',
        'EM0003',
        'EM0004',
        'EM0005',
        'EM0006',
        'EM0007',
        'EM0008',
        'EM0009',
        'EM0010',
        'EM0012',
        'EM0013',
        'EM0014',
      ].includes(code);
      assert.equal(shouldForceLogout(session, { status: 401, errorCode: code }), expected, code);
    }
    assert.equal(shouldForceLogout(session, { status: 403, errorCode: 'EM0003' }), false);
    assert.equal(shouldForceLogout({ session: true, preAuth: true }, { status: 401, errorCode: 'EM0003' }), false);
    assert.equal(shouldForceLogout({ session: false, preAuth: false }, { status: 401, errorCode: 'EM0003' }), false);
  });

  test('once only: ten calls failing together send one beacon, one logout and one callback', async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const proxy = fakeProxy(async () => {
      await gate;
      return json(401, { reason: 'token_expired' });
    });
    const { client, forced } = makeClient(proxy);
    const calls = [...Array.from({ length: 5 }, () => client.auth.profile()), ...Array.from({ length: 5 }, () => client.wallet.refresh())];
    release();
    const errors = await Promise.all(calls.map(rejection));
    await tick();
    assert.equal(errors.length, 10);
    assert.equal(forced.length, 1);
    assert.equal(proxy.beacons.length, 1);
    assert.equal(proxy.logoutCalls.length, 1);
    assert.ok(['EP0702-EM0003', 'EP0710-EM0003'].includes(forced[0] ?? ''));
    assert.equal(client.forcedLogoutFired, true);

    // Later failures, before a new login, stay silent.
    await rejection(client.auth.profile());
    assert.equal(forced.length, 1);
    assert.equal(proxy.beacons.length, 1);
  });

  test('a successful login re-arms it', async () => {
    let expired = true;
    const proxy = fakeProxy((c) => {
      if (c.url.endsWith('/api/auth/login')) return json(200, LOGIN_OK);
      return expired ? json(401, { reason: 'token_expired' }) : json(200, {});
    });
    const { client, forced } = makeClient(proxy);
    await rejection(client.auth.profile());
    await rejection(client.auth.profile());
    assert.equal(forced.length, 1);
    await client.auth.login({ body: { login: 'demo@example.com', password: 'Demo#2026' } });
    assert.equal(client.forcedLogoutFired, false);
    expired = false;
    await client.auth.profile();
    expired = true;
    await rejection(client.auth.profile());
    assert.equal(forced.length, 2);
    assert.equal(proxy.beacons.length, 2);
  });

  test('the failing call settles after the logout: the callback has run and the session flag is cleared', async () => {
    const proxy = fakeProxy((c) => (c.url.endsWith('/api/auth/login') ? json(200, LOGIN_OK) : json(401, { reason: 'revoked' })));
    const { client, forced } = makeClient(proxy);
    await client.auth.login({ body: { login: 'demo@example.com', password: 'Demo#2026' } });
    assert.equal(client.hasSession, true);
    await rejection(client.auth.profile());
    assert.deepEqual(forced, ['EP0702-EM0004']);
    assert.equal(client.hasSession, false);
    const order = proxy.calls.map((c) => c.url.replace('https://casino.example', ''));
    assert.deepEqual(order, ['/api/auth/login', '/api/auth/profile', '/api/auth/logout']);
    assert.equal(proxy.logoutCalls[0]?.method, 'POST');
    assert.equal(proxy.logoutCalls[0]?.credentials, 'include');
  });
});

describe('the beacon (spec 6.1)', () => {
  test('sendBeacon gets an application/json Blob with every field', async () => {
    const proxy = fakeProxy((c) => (c.url.endsWith('/api/auth/login') ? json(200, LOGIN_OK) : json(401, { reason: 'token_expired' })));
    const { client } = makeClient(proxy);
    await client.auth.login({ body: { login: 'demo@example.com', password: 'Demo#2026' } });
    await rejection(client.payments.depositStatus({ query: { transactionId: 'tx-secret-1' } }));
    await tick();
    assert.equal(proxy.beacons.length, 1);
    const [b] = proxy.beacons;
    assert.equal(b?.url, 'https://casino.example/api/logs/auth-logout');
    assert.equal(b?.type, 'application/json');
    assert.deepEqual(b?.body, {
      ref: 'EP0711-EM0003',
      endpointCode: 'EP0711',
      errorCode: 'EM0003',
      status: 401,
      reason: 'token_expired',
      url: '/api/payments/deposit-status',
      initiator: 'proxy-client',
      pathname: '/wallet',
      timestamp: 1_767_261_600_000,
      hadCookie: true,
      userAgentShort: 'Chrome/131 Linux',
    });
    assert.deepEqual(client.lastBeacon, b?.body);
  });

  test('hadCookie is false when the client never saw a session (state unknown, a refused cookie); the initiator can be set per call', async () => {
    const proxy = fakeProxy(() => json(401, { reason: 'token_expired' }));
    const { client } = makeClient(proxy);
    await rejection(client.auth.refresh({ initiator: 'refresh-driver' }));
    await tick();
    assert.equal(proxy.beacons[0]?.body.hadCookie, false);
    assert.equal(proxy.beacons[0]?.body.initiator, 'refresh-driver');
    assert.equal(proxy.beacons[0]?.body.ref, 'EP0704-EM0003');
  });

  test('falls back to fetch with keepalive when sendBeacon refuses or is missing', async () => {
    for (const variant of ['refuses', 'missing'] as const) {
      const proxy = fakeProxy(() => json(401, { reason: 'token_expired' }));
      if (variant === 'refuses') proxy.refuseBeacons();
      const { client, forced } = makeClient(proxy, variant === 'missing' ? { sendBeacon: null } : {});
      await rejection(client.auth.profile());
      const sent = proxy.calls.filter((c) => c.url.endsWith('/api/logs/auth-logout'));
      assert.equal(sent.length, 1, variant);
      assert.equal(sent[0]?.method, 'POST');
      assert.equal(sent[0]?.keepalive, true);
      assert.equal(sent[0]?.credentials, 'include');
      assert.equal(sent[0]?.headers['content-type'], 'application/json');
      assert.equal((sent[0]?.body as ForcedLogoutBeacon | undefined)?.ref, 'EP0702-EM0003');
      assert.equal(forced.length, 1);
    }
  });

  test('long values are cut to what the proxy accepts', () => {
    const b = buildForcedLogoutBeacon(
      {
        ref: 'EP0702-EM0005',
        endpointCode: 'EP0702',
        errorCode: 'EM0005',
        status: 401,
        reason: 'r'.repeat(5000),
        url: `/api/x?${'q'.repeat(10)}`,
      },
      { initiator: 'i'.repeat(500), pathname: `/${'p'.repeat(5000)}`, timestamp: 1.5, hadCookie: false, userAgent: 'u'.repeat(900) },
    );
    assert.equal(b.reason.length, 512);
    assert.equal(b.url, '/api/x');
    assert.equal(b.initiator.length, 128);
    assert.equal(b.pathname.length, 2048);
    assert.equal(b.timestamp, 1);
    assert.ok(b.userAgentShort.length <= 64);
  });

  test('shortUserAgent', () => {
    const rows: [string, string][] = [
      [
        'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
        'Chrome/131 Windows',
      ],
      [
        'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.2903.86',
        'Edge/131 Windows',
      ],
      [
        'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1',
        'Safari/17 iOS',
      ],
      ['Mozilla/5.0 (Macintosh; Intel Mac OS X 14.5; rv:128.0) Gecko/20100101 Firefox/128.0', 'Firefox/128 macOS'],
      [
        'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36',
        'Chrome/131 Android',
      ],
      [
        'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/131.0.0.0 Safari/537.36',
        'HeadlessChrome/131 Linux',
      ],
      ['curl/8.5.0', 'curl/8.5.0'],
      ['', ''],
    ];
    for (const [ua, short] of rows) assert.equal(shortUserAgent(ua), short, ua);
  });
});

describe('the session the client believes it has (hadCookie)', () => {
  test('login success sets it, a second-factor answer does not, logout clears it', async () => {
    let answer: unknown = { type: 'two_factor_code' };
    const proxy = fakeProxy(() => json(200, answer));
    const storage = memoryStorage();
    const events: string[] = [];
    const { client } = makeClient(proxy, { storage });
    client.onSessionChange((e) => events.push(`${e.type}:${e.cause}`));
    await client.auth.login({ body: { login: '2fa@example.com', password: 'Demo#2026' } });
    assert.equal(client.hasSession, false);
    answer = LOGIN_OK;
    await client.auth.login({ body: { login: '2fa@example.com', password: 'Demo#2026', two_factor_code: 123456 } });
    assert.equal(client.hasSession, true);
    assert.deepEqual(
      JSON.parse(storage.getItem('front-proxy:session') ?? ''),
      { status: 'signedIn', expiresAt: 1_767_261_600 + 25_200 },
      'the state, never the token',
    );
    answer = { ok: true };
    await client.auth.refresh();
    await client.auth.logout();
    assert.equal(client.hasSession, false);
    assert.deepEqual(events, ['established:login', 'established:refresh', 'ended:logout']);
  });

  test('the flag persists in storage across clients (a reload)', async () => {
    const storage = memoryStorage();
    const proxy = fakeProxy(() => json(200, LOGIN_OK));
    await makeClient(proxy, { storage }).client.auth.login({ body: { login: 'demo@example.com', password: 'Demo#2026' } });
    assert.equal(makeClient(proxy, { storage }).client.hasSession, true);
  });
});

describe('typed functions', () => {
  test('one function per row, typed from the row (checked by the compiler)', () => {
    const { client } = makeClient(fakeProxy());
    const typeChecks = async () => {
      // @ts-expect-error the path parameter slug is required
      await client.games.category();
      // @ts-expect-error the deposit body is a DepositPayload
      await client.payments.deposit({ body: { amount: 5 } });
      // @ts-expect-error GET routes take no body
      await client.games.list({ body: { a: 1 } });
      const profile = await client.auth.profile();
      const id: number = profile.user.id;
      const login = await client.auth.login({ body: { login: 'x', password: 'y', two_factor_code: 123456 } });
      const type: 'cancelled_account' | 'two_factor_code' | undefined = login.type;
      const receipt: Blob = await client.wallet.receipt({ body: { id: 1 } });
      return [id, type, receipt];
    };
    assert.equal(typeof typeChecks, 'function');
    let count = 0;
    // The live feeds sit beside the sportsbook's route functions (browser-live.test.ts).
    const liveFeeds = new Set([client.sports.live, client.sports.liveSocket]);
    for (const [area, functions] of Object.entries(client)) {
      if (typeof functions !== 'object' || functions === null || area === 'routes' || area === 'session') continue;
      count += Object.values(functions).filter((f) => typeof f === 'function' && !liveFeeds.has(f as never)).length;
    }
    assert.equal(count, client.routes.length);
    assert.equal(liveFeeds.size, 2);
  });
});

describe('money moves carry an Idempotency-Key (docs/behaviour.md "Money moves: exactly once")', () => {
  const deposit = { userId: 1001, creditAmount: 5000, paymentMethod: 'pix', currency: 'BRL' } as const;

  test('a fresh key per action, none on other routes', async () => {
    const proxy = fakeProxy();
    const { client } = makeClient(proxy);
    await client.payments.deposit({ body: deposit });
    await client.payments.deposit({ body: deposit });
    await client.payments.withdraw({ body: { amount: 100, method: 'pix' } });
    await client.payments.bankList();
    const keys = proxy.apiCalls.map((c) => c.headers['idempotency-key']);
    assert.match(keys[0] ?? '', /^[0-9a-f-]{36}$/);
    assert.equal(new Set(keys.slice(0, 3)).size, 3);
    assert.equal(keys[3], undefined);
  });

  test('one retry after a network failure, with the same key; the caller may give its own key', async () => {
    let failures = 1;
    const proxy = fakeProxy(() => {
      if (failures-- > 0) throw new TypeError('network down');
      return json(200, { transaction_id: 'ch_1' });
    });
    const { client } = makeClient(proxy);
    await client.payments.deposit({ body: deposit, headers: { 'Idempotency-Key': 'caller-key-1' } });
    assert.deepEqual(
      proxy.apiCalls.map((c) => c.headers['idempotency-key']),
      ['caller-key-1', 'caller-key-1'],
    );
  });

  test('a second network failure is a ProxyError with status 0 (two attempts, never more)', async () => {
    const proxy = fakeProxy(() => {
      throw new TypeError('network down');
    });
    const { client } = makeClient(proxy);
    await assert.rejects(client.payments.deposit({ body: deposit }), (e: unknown) => e instanceof ProxyError && e.status === 0);
    assert.equal(proxy.apiCalls.length, 2);
    assert.equal(proxy.apiCalls[0]?.headers['idempotency-key'], proxy.apiCalls[1]?.headers['idempotency-key']);
  });
});

describe('the session state decides (a guest is never logged out; spec 6.1)', () => {
  const rows: [state: 'unknown' | 'signedIn' | 'signedOut', reason: string, forces: boolean, after: string][] = [
    ['unknown', 'no_token', false, 'signedOut'],
    ['unknown', 'token_expired', true, 'signedOut'],
    ['unknown', 'invalid_token', true, 'signedOut'],
    ['signedIn', 'no_token', true, 'signedOut'],
    ['signedIn', 'token_expired', true, 'signedOut'],
    ['signedOut', 'no_token', false, 'signedOut'],
    ['signedOut', 'token_expired', false, 'signedOut'],
  ];
  for (const [state, reason, forces, after] of rows) {
    test(`${state} + 401 ${reason} → ${forces ? 'forced logout' : 'no beacon, no logout call, no callback'}; then ${after}`, async () => {
      const storage = memoryStorage();
      if (state !== 'unknown') storage.setItem('front-proxy:session', JSON.stringify({ status: state, expiresAt: null }));
      const proxy = fakeProxy(() => json(401, { reason }));
      const { client, forced } = makeClient(proxy, { storage });
      const changes: string[] = [];
      client.session.onChange((c) => changes.push(`${c.previous}->${c.status}:${c.cause}`));
      assert.equal(client.session.status, state);
      await rejection(client.auth.profile());
      await tick();
      assert.deepEqual([forced.length, proxy.beacons.length, proxy.logoutCalls.length], forces ? [1, 1, 1] : [0, 0, 0]);
      assert.equal(client.session.status, after);
      assert.deepEqual(changes, state === after ? [] : [`${state}->${after}:${forces ? 'forced-logout' : 'call'}`]);
    });
  }

  test('after an explicit logout, a 401 no_token forces nothing', async () => {
    const proxy = fakeProxy((c) => (c.url.endsWith('/api/auth/login') ? json(200, LOGIN_OK) : json(401, { reason: 'no_token' })));
    const { client, forced } = makeClient(proxy);
    await client.auth.login({ body: { login: 'demo@example.com', password: 'Demo#2026' } });
    await client.auth.logout();
    assert.equal(client.session.status, 'signedOut');
    await rejection(client.auth.profile());
    await rejection(client.wallet.refresh());
    assert.deepEqual([forced.length, proxy.beacons.length, proxy.logoutCalls.length], [0, 0, 1], 'only the explicit logout call');
  });

  test('checkSession: one GET /api/auth/session at start when unknown; its answer sets the state', async () => {
    const answers = [{ signedIn: false }, { signedIn: true, expiresAt: 1_767_265_200 }];
    for (const answer of answers) {
      const proxy = fakeProxy((c) => (c.url.endsWith('/api/auth/session') ? json(200, answer) : json(200, {})));
      const { client } = makeClient(proxy, { checkSession: true });
      const changes: unknown[] = [];
      client.session.onChange((c) => changes.push(c));
      assert.equal(client.session.status, 'unknown');
      const state = await client.session.initialCheck;
      const expected = answer.signedIn
        ? { status: 'signedIn', expiresAt: answer.expiresAt, error: null }
        : { status: 'signedOut', expiresAt: null, error: null };
      assert.deepEqual(state, expected);
      assert.deepEqual([client.session.status, client.session.expiresAt], [expected.status, expected.expiresAt]);
      assert.deepEqual(changes, [{ ...expected, cause: 'session-check', previous: 'unknown', forcedLogout: null }]);
      assert.deepEqual(
        proxy.calls.map((c) => `${c.method} ${c.url}`),
        ['GET https://casino.example/api/auth/session'],
      );
    }
  });

  test('no check when the state is stored, nor by default outside a page; a stored expiry that passed reads unknown', async () => {
    const proxy = fakeProxy(() => json(200, { signedIn: false }));
    const known = makeClient(proxy, { checkSession: true, storage: signedInStorage() }).client;
    assert.equal(known.session.initialCheck, null);
    assert.equal(makeClient(proxy).client.session.initialCheck, null);
    assert.equal(proxy.calls.length, 0);
    const storage = memoryStorage();
    storage.setItem('front-proxy:session', JSON.stringify({ status: 'signedIn', expiresAt: 1_767_261_599 }));
    assert.equal(makeClient(proxy, { storage }).client.session.status, 'unknown');
    assert.equal(storage.getItem('front-proxy:session'), null, 'forgotten');
  });

  test('an answer of the session route that comes after a login does not overwrite it', async () => {
    let release: (r: Response) => void = () => undefined;
    const proxy = fakeProxy((c) => {
      if (c.url.endsWith('/api/auth/session')) return new Promise<Response>((resolve) => (release = resolve));
      return json(200, LOGIN_OK);
    });
    const { client } = makeClient(proxy, { checkSession: true });
    await client.auth.login({ body: { login: 'demo@example.com', password: 'Demo#2026' } });
    release(json(200, { signedIn: false }));
    await client.session.initialCheck;
    assert.equal(client.session.status, 'signedIn');
  });

  test('a failed session check gives the state error with its ProxyError; a success on a session route shows a session', async () => {
    const proxy = fakeProxy((c) =>
      c.url.endsWith('/api/auth/session') ? json(503, { ok: false, error: 'overloaded', detail: 'x' }) : json(200, { user: { id: 1 } }),
    );
    const { client } = makeClient(proxy, { checkSession: true, retry: false });
    const state = await client.session.initialCheck;
    assert.equal(state?.status, 'error');
    assert.ok(state?.error instanceof ProxyError);
    assert.equal(state.error.ref, 'EP0799-EM0032');
    assert.equal(client.session.error, state.error);
    await client.auth.profile();
    assert.deepEqual(client.session.snapshot, { status: 'signedIn', expiresAt: null, error: null });
    client.close();
  });

  test('shared between tabs through the channel: a login in one tab signs the other in, a forced logout signs it out (one callback)', async () => {
    // Two tabs with their own storage (partitioned), linked by a channel pair like BroadcastChannel.
    type End = { postMessage(m: unknown): void; onmessage: ((e: { data: unknown }) => void) | null };
    const a: End = { postMessage: (m) => queueMicrotask(() => b.onmessage?.({ data: structuredClone(m) })), onmessage: null };
    const b: End = { postMessage: (m) => queueMicrotask(() => a.onmessage?.({ data: structuredClone(m) })), onmessage: null };
    let expired = false;
    const proxy = fakeProxy((c) =>
      c.url.endsWith('/api/auth/login')
        ? json(200, LOGIN_OK)
        : expired
          ? json(401, { reason: 'token_expired' })
          : json(200, { user: { id: 1 } }),
    );
    const tabA = makeClient(proxy, { sessionChannel: a });
    const tabB = makeClient(proxy, { sessionChannel: b });
    const seenB: string[] = [];
    tabB.client.session.onChange((c) => seenB.push(`${c.status}:${c.cause}`));
    await tabA.client.auth.login({ body: { login: 'demo@example.com', password: 'Demo#2026' } });
    await tick();
    assert.equal(tabB.client.session.status, 'signedIn');
    assert.equal(tabB.client.session.expiresAt, 1_767_261_600 + 25_200);
    expired = true;
    await rejection(tabA.client.auth.profile());
    await tick();
    assert.equal(tabB.client.session.status, 'signedOut');
    assert.deepEqual(seenB, ['signedIn:other-tab', 'signedOut:other-tab']);
    // Tab B then fails too: it already knows the session ended, so no second logout.
    await rejection(tabB.client.wallet.refresh());
    await tick();
    // Tab B tells its user too (the same reference, cause other-tab), without a beacon or logout call of its own.
    assert.deepEqual(
      [tabA.forced, tabB.forced, proxy.beacons.length, proxy.logoutCalls.length],
      [['EP0702-EM0003'], ['EP0702-EM0003'], 1, 1],
    );
  });
});

describe('a session that recovers from a failed check and ends at its expiry', () => {
  // setTimeout is mocked in some of these tests: settle promises with setImmediate.
  const flush = () => new Promise((resolve) => setImmediate(resolve));

  test('nextCheckDelayMs: 1 s doubling to 30 s, jittered into [0.5, 1) of it', () => {
    const rows: [failures: number, random: number, ms: number][] = [
      [0, 0, 500],
      [0, 0.999_999, 1000],
      [1, 0, 1000],
      [4, 0, 8000],
      [5, 0, 15_000],
      [6, 0.999_999, 30_000],
      [60, 0, 15_000],
    ];
    for (const [failures, random, ms] of rows)
      assert.equal(
        nextCheckDelayMs(failures, () => random),
        ms,
        `${failures} failures, random ${random}`,
      );
  });

  test('error → asked again after the backoff, then signedIn; retry() asks at once; every change reported', async (t) => {
    t.mock.timers.enable({ apis: ['setTimeout'] });
    let up = false;
    const proxy = fakeProxy((c) => {
      if (!c.url.endsWith('/api/auth/session')) return json(200, {});
      if (!up) throw new TypeError('Failed to fetch');
      return json(200, { signedIn: true, expiresAt: 1_767_265_200 });
    });
    const { client } = makeClient(proxy, { checkSession: true, random: () => 0 });
    const changes: string[] = [];
    client.session.onChange((c) => changes.push(`${c.previous}->${c.status}${c.error ? ` ${c.error.ref}` : ''}`));
    assert.equal((await client.session.initialCheck)?.status, 'error');
    assert.equal(client.session.error?.ref, 'EP0799-EM0042');
    const checks = () => proxy.calls.filter((c) => c.url.endsWith('/api/auth/session')).length;
    assert.equal(checks(), 1);
    t.mock.timers.tick(499);
    await flush();
    assert.equal(checks(), 1, 'not before the first wait (500 ms with this jitter)');
    t.mock.timers.tick(1);
    await flush();
    assert.equal(checks(), 2, 'asked again after it');
    await Promise.all([client.session.check(), client.session.check()]);
    assert.equal(checks(), 3, 'two checks at once share one request');
    assert.equal(client.session.status, 'error');
    up = true;
    const state = await client.session.retry();
    assert.deepEqual(state, { status: 'signedIn', expiresAt: 1_767_265_200, error: null });
    assert.equal(checks(), 4, 'retry() asks at once');
    t.mock.timers.tick(60_000);
    await flush();
    assert.equal(checks(), 4, 'no more checks once answered');
    assert.deepEqual(changes, ['unknown->error EP0799-EM0042', 'error->signedIn']);
    client.close();
  });

  test('a 401 no_token while in error is a guest (signedOut, nothing forced); a refused cookie forces the logout', async () => {
    for (const [reason, forces] of [
      ['no_token', false],
      ['token_expired', true],
    ] as const) {
      const proxy = fakeProxy((c) =>
        c.url.endsWith('/api/auth/session') ? json(502, { ok: false, error: 'bad_gateway', detail: 'x' }) : json(401, { reason }),
      );
      const { client, forced } = makeClient(proxy, { checkSession: true, retry: false });
      assert.equal((await client.session.initialCheck)?.status, 'error');
      await rejection(client.wallet.refresh());
      assert.equal(client.session.status, 'signedOut');
      assert.deepEqual([forced.length, proxy.beacons.length, proxy.logoutCalls.length], forces ? [1, 1, 1] : [0, 0, 0], reason);
      client.close();
    }
  });

  test("expiry: at the token's exp the forced logout runs at once (EP0799-EM0003, one beacon, one logout call), not later as a guest", async (t) => {
    t.mock.timers.enable({ apis: ['setTimeout'] });
    let clock = 1_767_261_600_000;
    const proxy = fakeProxy((c) => (c.url.endsWith('/api/auth/login') ? json(200, LOGIN_OK) : json(401, { reason: 'no_token' })));
    const { client, forced } = makeClient(proxy, { now: () => clock });
    const changes: string[] = [];
    client.session.onChange((c) => changes.push(`${c.status}:${c.cause}`));
    await client.auth.login({ body: { login: 'demo@example.com', password: 'Demo#2026' } });
    assert.equal(client.session.expiresAt, 1_767_261_600 + 25_200);
    clock += 25_200_000 - 1;
    t.mock.timers.tick(25_200_000 - 1);
    await flush();
    assert.equal(client.session.status, 'signedIn', 'still signed in a millisecond before exp');
    clock += 1;
    t.mock.timers.tick(1);
    await flush();
    await flush();
    assert.deepEqual(forced, ['EP0799-EM0003']);
    assert.deepEqual(changes, ['signedIn:login', 'signedOut:forced-logout']);
    assert.equal(proxy.beacons.length, 1);
    assert.equal(proxy.logoutCalls.length, 1);
    assert.deepEqual(
      { ...client.lastBeacon, userAgentShort: undefined, timestamp: undefined },
      {
        ref: 'EP0799-EM0003',
        endpointCode: 'EP0799',
        errorCode: 'EM0003',
        status: 401,
        reason: 'token_expired',
        url: '/api/auth/session',
        initiator: 'session-expiry',
        pathname: '/wallet',
        hadCookie: true,
        userAgentShort: undefined,
        timestamp: undefined,
      },
    );
    // The next call's 401 no_token reads as what it is now: a signed-out page, nothing forced again.
    await rejection(client.wallet.refresh());
    assert.deepEqual([forced.length, proxy.beacons.length, proxy.logoutCalls.length], [1, 1, 1]);
    client.close();
  });

  test('a refresh forgets the old exp until the session route gives the new one; no expiry timer on the old one', async (t) => {
    t.mock.timers.enable({ apis: ['setTimeout'] });
    let clock = 1_767_261_600_000;
    let sessionUp = false;
    const proxy = fakeProxy((c) => {
      if (c.url.endsWith('/api/auth/login')) return json(200, LOGIN_OK);
      if (c.url.endsWith('/api/auth/refresh')) return json(200, { ok: true });
      if (c.url.endsWith('/api/auth/session')) {
        if (!sessionUp) throw new TypeError('Failed to fetch');
        return json(200, { signedIn: true, expiresAt: Math.floor(clock / 1000) + 25_200 });
      }
      return json(200, {});
    });
    const { client, forced } = makeClient(proxy, { now: () => clock });
    await client.auth.login({ body: { login: 'demo@example.com', password: 'Demo#2026' } });
    clock += 6 * 3600 * 1000;
    await client.auth.refresh();
    await flush();
    assert.deepEqual(
      client.session.snapshot,
      { status: 'signedIn', expiresAt: null, error: null },
      'the check failed: the exp is unknown, the state still signedIn',
    );
    clock += 3600 * 1000 + 1000;
    t.mock.timers.tick(3600 * 1000 + 1000);
    await flush();
    assert.deepEqual([forced.length, proxy.beacons.length], [0, 0], 'the old exp passed: nothing forced');
    sessionUp = true;
    await client.session.check();
    assert.equal(client.session.expiresAt, Math.floor(clock / 1000) + 25_200);
    client.close();
  });

  test('one forced logout per browser: two tabs failing together with Web Locks → one beacon, one logout call, both told (this-tab, other-tab)', async () => {
    // One storage shared by two tabs, a channel between them, and a lock manager.
    const storage = memoryStorage();
    const locks = fakeLocks();
    // The tabs' BroadcastChannel: what one tab sets reaches the other.
    type End = { postMessage(m: unknown): void; onmessage: ((e: { data: unknown }) => void) | null };
    const ends: End[] = [];
    for (let i = 0; i < 2; i++)
      ends.push({ postMessage: (m) => queueMicrotask(() => ends[1 - i]?.onmessage?.({ data: structuredClone(m) })), onmessage: null });
    storage.setItem('front-proxy:session', JSON.stringify({ status: 'signedIn', expiresAt: null }));
    let releaseWallet: () => void = () => undefined;
    const walletGate = new Promise<void>((resolve) => (releaseWallet = resolve));
    const proxy = fakeProxy(async () => {
      await walletGate;
      return json(401, { reason: 'token_expired' });
    });
    const told: string[] = [];
    const tab = (name: string, channel: End | undefined) =>
      makeClient(proxy, {
        storage,
        locks,
        sessionChannel: channel ?? null,
        onForcedLogout: (ref, _error, beacon, info) => told.push(`${name} ${ref} ${info.cause} ${beacon.initiator}`),
      }).client;
    const [a, b] = [tab('A', ends[0]), tab('B', ends[1])];
    const failures = Promise.all([rejection(a.wallet.refresh()), rejection(b.wallet.refresh())]);
    releaseWallet();
    const [ea, eb] = await failures;
    await flush();
    assert.equal(ea.ref, 'EP0710-EM0003');
    assert.equal(eb.ref, 'EP0710-EM0003');
    assert.deepEqual([proxy.beacons.length, proxy.logoutCalls.length], [1, 1], 'one beacon, one logout call');
    assert.deepEqual(
      [locks.grants.get(FORCED_LOGOUT_LOCK_NAME), locks.refusals.get(FORCED_LOGOUT_LOCK_NAME)],
      [1, 1],
      'one tab got the lock; the other found it taken and waited for its state',
    );
    assert.deepEqual(told.sort(), ['A EP0710-EM0003 this-tab proxy-client', 'B EP0710-EM0003 other-tab proxy-client']);
    assert.deepEqual([a.session.status, b.session.status], ['signedOut', 'signedOut']);
    a.close();
    b.close();
  });
  test("one forced logout per browser: a tab elected after the other's run, its storage not told yet, does not run it again", async () => {
    const locks = fakeLocks();
    // Tab A writes the shared storage; tab B reads its own copy, which hears A's writes only when
    // told (as a renderer's copy of localStorage hears another's late under load).
    const shared = memoryStorage();
    const copyOfB = new Map<string, string>();
    const storageOfB = {
      getItem: (key: string) => copyOfB.get(key) ?? null,
      setItem: (key: string, value: string) => {
        copyOfB.set(key, value);
        shared.setItem(key, value);
      },
      removeItem: (key: string) => {
        copyOfB.delete(key);
        shared.removeItem(key);
      },
    };
    const signedIn = JSON.stringify({ status: 'signedIn', expiresAt: null });
    shared.setItem('front-proxy:session', signedIn);
    copyOfB.set('front-proxy:session', signedIn);
    // B's end of the tabs' channel: A's state reaches it only when the test delivers it.
    const channelOfB: { postMessage(m: unknown): void; onmessage: ((e: { data: unknown }) => void) | null } = {
      postMessage: () => {},
      onmessage: null,
    };
    const proxy = fakeProxy(async () => json(401, { reason: 'token_expired' }));
    const told: string[] = [];
    const tab = (name: string, storage: KeyValueStorage, channel: typeof channelOfB | null) =>
      makeClient(proxy, {
        storage,
        locks,
        sessionChannel: channel,
        onForcedLogout: (ref, _error, _beacon, info) => told.push(`${name} ${ref} ${info.cause}`),
      }).client;
    const a = tab('A', shared, null);
    const b = tab('B', storageOfB, channelOfB);
    await rejection(a.wallet.refresh());
    await flush();
    assert.deepEqual([proxy.beacons.length, proxy.logoutCalls.length], [1, 1], "A's forced logout ran");
    // A let the first lock go (its linger passed); B's copy of the storage still says signedIn.
    await new Promise((resolve) => setTimeout(resolve, FORCED_LOGOUT_LOCK_LINGER_MS + 100));
    assert.equal(locks.held.has(FORCED_LOGOUT_LOCK_NAME), false);
    const failed = rejection(b.wallet.refresh());
    await flush();
    assert.deepEqual(
      [proxy.beacons.length, proxy.logoutCalls.length],
      [1, 1],
      'B got the first lock, found the session ended, ran nothing',
    );
    assert.equal(b.session.status, 'signedIn', 'B waits for the state');
    // The state reaches B: told, signed out, still one beacon and one logout call.
    copyOfB.set('front-proxy:session', shared.getItem('front-proxy:session') as string);
    channelOfB.onmessage?.({ data: JSON.parse(shared.getItem('front-proxy:session') as string) });
    await failed;
    await flush();
    assert.equal(b.session.status, 'signedOut');
    assert.deepEqual([proxy.beacons.length, proxy.logoutCalls.length], [1, 1]);
    assert.deepEqual(told.sort(), ['A EP0710-EM0003 this-tab', 'B EP0710-EM0003 other-tab']);
    const ended = [...locks.grants.keys()].filter((name) => name.includes(':ended:'));
    assert.equal(ended.length, 1, 'A took the session\'s "ended" lock');
    assert.equal(locks.refusals.get(ended[0] as string), 1, 'B asked for it and found it held');
    a.close();
    b.close();
  });
});

describe('default storage', () => {
  test('outside a page a global localStorage is not used (a server renders many users); in a page it is', () => {
    const g = globalThis as { localStorage?: unknown; document?: unknown };
    const saved = { localStorage: g.localStorage, document: g.document };
    const shared = memoryStorage();
    try {
      g.localStorage = shared;
      delete g.document;
      defaultStorage().setItem('k', 'server');
      assert.equal(shared.getItem('k'), null);
      g.document = {};
      assert.equal(defaultStorage(), shared);
    } finally {
      if (saved.localStorage === undefined) delete g.localStorage;
      else g.localStorage = saved.localStorage;
      if (saved.document === undefined) delete g.document;
      else g.document = saved.document;
    }
  });
});
