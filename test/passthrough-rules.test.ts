/**
 * The raw passthrough keeps every rule of the named routes (docs/behaviour.md "The raw passthrough"),
 * the real proxy in production mode over real sockets before a raw fake BFF (`helpers/raw-upstream.ts`):
 *
 * - a sub-path a named row of spec 4.7 serves (launch, anonymous launch, search, in any spelling a BFF
 *   router matches) answers 404 naming the route, with and without a session, same-site and cross-site,
 *   and calls nothing upstream;
 * - internal keys (the table `INTERNAL_KEYS`, row by row) leave no answer of the launches, the game
 *   start and the passthrough, while the fields a front end needs stay;
 * - content that runs script is refused (502), every answer carries the sandbox CSP and `nosniff`, a
 *   401/403 body passes byte for byte only as JSON;
 * - the session cookie under other spellings is never forwarded, and its value is redacted;
 * - a UTF-16 or base64 echo of the token never reaches the browser;
 * - an answer framed with both `Content-Length` and `Transfer-Encoding` is `upstream_bad_response`,
 *   never sent again.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { INTERNAL_KEYS, internalKeyForm, isInternalKey, stripDebug } from '../src/envelope.js';
import { encodedForms } from '../src/session/redact.js';
import { fakeJwt, send, startProxy, type TestProxy } from './helpers/recording-upstream.js';
import { rawAnswer, type RawUpstream, startRawUpstream, writes } from './helpers/raw-upstream.js';

const COOKIE = '__Host-access_token';
const JSON_TYPE: [string, string] = ['Content-Type', 'application/json'];
let up: RawUpstream;
let proxy: TestProxy;

before(async () => {
  up = await startRawUpstream();
  proxy = await startProxy(up.url, { NODE_ENV: 'production', UPSTREAM_TIMEOUT_MS: '2000' });
});
after(async () => {
  await proxy?.close();
  await up?.close();
});

/** A request to the proxy with the production session cookie. */
function get(path: string, options: { token?: string; headers?: Record<string, string> } = {}) {
  return send(proxy.url, 'GET', path, { ...options, cookieName: COOKIE });
}

const json = (value: unknown, status = 200) => writes(rawAnswer(status, [JSON_TYPE], JSON.stringify(value)));

describe('named sub-paths keep their route', () => {
  const cases: [string, string][] = [
    ['/api/core-sportbook/launch', '/api/sports/launch'],
    ['/api/core-sportbook/Launch/', '/api/sports/launch'],
    ['/api/core-sportbook/%6Caunch?lang=pt', '/api/sports/launch'],
    ['/api/core-sportbook/anonymous-launch', '/api/sports/anonymous-launch'],
    ['/api/core-sportbook/search?search=x&boom=1', '/api/sports/search'],
    ['/api/core-sportbook/SEARCH', '/api/sports/search'],
  ];
  for (const [path, named] of cases) {
    for (const signedIn of [false, true]) {
      for (const site of ['same-origin', 'cross-site']) {
        test(`${path} (${signedIn ? 'session' : 'no session'}, ${site}) → 404 naming ${named}, nothing upstream`, async () => {
          up.reset();
          const res = await get(path, {
            ...(signedIn && { token: fakeJwt() }),
            headers: { 'sec-fetch-site': site, 'sec-fetch-mode': 'navigate' },
          });
          assert.equal(res.status, 404);
          assert.equal((res.json as { route?: string }).route, named);
          assert.match(res.headers.get('x-error-ref') ?? '', /^EP\d{4}-EM\d{4}$/);
          assert.equal(up.seen.length, 0);
        });
      }
    }
  }

  test('a cross-site launch through its own route is refused 403 (the side-effect rule)', async () => {
    up.reset();
    const res = await get('/api/sports/launch', { token: fakeJwt(), headers: { 'sec-fetch-site': 'cross-site' } });
    assert.equal(res.status, 403);
    assert.equal(up.seen.length, 0);
  });
});

/** A sample key for each row of `INTERNAL_KEYS`, in other cases and separators than the table's form. */
function sampleKeys(): string[] {
  return INTERNAL_KEYS.map((rule) => {
    const camel = rule.form.replace(
      /(key|token|secret|password|id|log|request|response|headers)$/,
      (m) => m[0]?.toUpperCase() + m.slice(1),
    );
    if (rule.match === 'starts') return `${camel}_extra`;
    if (rule.match === 'ends') return `partner_${camel}`;
    return camel;
  });
}

describe('internal keys (INTERNAL_KEYS), row by row', () => {
  for (const [i, rule] of INTERNAL_KEYS.entries()) {
    const key = sampleKeys()[i] as string;
    test(`${rule.match} "${rule.form}": ${key} is stripped`, () => {
      assert.equal(isInternalKey(key), true, `${key} (${internalKeyForm(key)})`);
      assert.equal(isInternalKey(key.toUpperCase()), true);
      assert.deepEqual(stripDebug({ url: 'u', nested: [{ [key]: 'x', ok: 1 }] }), { url: 'u', nested: [{ ok: 1 }] });
    });
  }
  for (const key of [
    'url',
    'token',
    'expires_in',
    'expiresIn',
    'id',
    'key',
    'gameKey',
    'game_id',
    'name',
    'lang',
    'device',
    'tracking',
    'stake',
    'odds',
    'currency',
  ]) {
    test(`${key} stays`, () => assert.equal(isInternalKey(key), false));
  }
  test('an answer with nothing to strip is the same value (its bytes are sent as they came)', () => {
    const value = { url: 'u', token: 't', list: [1, { a: 2 }] };
    assert.equal(stripDebug(value), value);
  });
});

const LEAKY = {
  url: 'https://sb.example/?token=launch-token',
  token: 'launch-token',
  expires_in: 3600,
  debug: { user_id: 1001, upstream_request: { api_key: 'sandbox-sportsbook-key' } },
  partner: { apiKey: 'PARTNER-KEY', access_key: 'ACCESSKEY-999', password: 'pw-leak', name: 'Partner' },
  accessKey: 'AK',
  token_secret: 'TS',
  providerToken: 'PT',
};
const KEPT = { url: LEAKY.url, token: LEAKY.token, expires_in: 3600, partner: { name: 'Partner' } };

describe('nothing internal leaves', () => {
  test('/api/sports/launch and /api/sports/anonymous-launch drop the credentials, keep url, token and expires_in', async () => {
    up.reset();
    up.on('/core-sportbook/', json(LEAKY));
    assert.deepEqual((await get('/api/sports/launch', { token: fakeJwt() })).json, KEPT);
    assert.deepEqual((await get('/api/sports/anonymous-launch')).json, KEPT);
  });

  test('a game start drops accessKey, token_secret and providerToken, keeps its url', async () => {
    up.reset();
    up.on(
      '/start-game-v2',
      json({ url: 'https://games.example/play?t=1', accessKey: 'AK', token_secret: 'TS', providerToken: 'PT', session: { id: 's1' } }),
    );
    const res = await get('/api/games/start?slug=book-of-ra', { token: fakeJwt() });
    assert.equal(res.status, 200);
    assert.deepEqual(res.json, { url: 'https://games.example/play?t=1', session: { id: 's1' } });
  });

  test('a passthrough JSON answer is stripped too, with and without a session', async () => {
    up.reset();
    up.on('/core-sportbook/events', json(LEAKY));
    for (const token of [undefined, fakeJwt()]) {
      const res = await get('/api/core-sportbook/events/1', token === undefined ? {} : { token });
      assert.equal(res.status, 200);
      assert.deepEqual(res.json, KEPT);
      assert.doesNotMatch(res.text, /ACCESSKEY|pw-leak|sandbox-sportsbook-key|PARTNER-KEY/);
    }
  });

  test('a passthrough JSON answer with nothing internal keeps its bytes', async () => {
    up.reset();
    const text = '{ "odds" : [1.5, 2.25] }';
    up.on('/core-sportbook/odds', writes(rawAnswer(200, [['Content-Type', 'application/vnd.odds+json']], text)));
    const res = await get('/api/core-sportbook/odds/1');
    assert.equal(res.text, text);
    assert.equal(res.headers.get('content-type'), 'application/vnd.odds+json');
  });
});

describe('upstream content cannot run on the site’s origin', () => {
  const XSS = '<img src=x onerror=alert(document.cookie)><script>fetch("/api/payments/withdraw",{method:"POST"})</script>';
  for (const type of [
    'text/html',
    'TEXT/HTML; charset=utf-8',
    'application/xhtml+xml',
    'image/svg+xml',
    'application/xml',
    'text/xml',
    'application/rss+xml',
    'text/javascript',
    'application/javascript',
  ]) {
    for (const signedIn of [false, true]) {
      test(`a 200 ${type} (${signedIn ? 'session' : 'no session'}) → 502 upstream_bad_response, sandbox CSP`, async () => {
        up.reset();
        up.on('/core-sportbook/html', writes(rawAnswer(200, [['Content-Type', type]], XSS)));
        const res = await get(
          `/api/core-sportbook/html?q=${encodeURIComponent('<img src=x onerror=alert(1)>')}`,
          signedIn ? { token: fakeJwt() } : {},
        );
        assert.equal(res.status, 502);
        assert.equal((res.json as { error?: string }).error, 'upstream_bad_response');
        assert.doesNotMatch(res.text, /script|onerror/);
        assert.equal(res.headers.get('content-security-policy'), "sandbox; default-src 'none'");
        assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
      });
    }
  }

  test('every passthrough answer carries the CSP: a 200 of plain text, a 404 and a refused path', async () => {
    up.reset();
    up.on('/core-sportbook/text', writes(rawAnswer(200, [['Content-Type', 'text/plain']], 'hello')));
    up.on('/core-sportbook/missing', json({ error: 'not_found' }, 404));
    for (const path of [
      '/api/core-sportbook/text',
      '/api/core-sportbook/missing',
      '/api/core-sportbook/a/..%2f..',
      '/api/core-sportbook/launch',
    ]) {
      const res = await get(path);
      assert.equal(res.headers.get('content-security-policy'), "sandbox; default-src 'none'", path);
      assert.equal(res.headers.get('x-content-type-options'), 'nosniff', path);
    }
  });

  test('a 401 passes byte for byte only as JSON: text/html; x=json gets the envelope, application/problem+json its bytes', async () => {
    up.reset();
    up.on('/core-sportbook/html401', writes(rawAnswer(401, [['Content-Type', 'text/html; x=json']], '<script>alert(1)</script>')));
    up.on('/core-sportbook/json401', writes(rawAnswer(401, [['Content-Type', 'application/problem+json']], '{"reason":"token_expired"}')));
    up.on('/core-sportbook/html403', writes(rawAnswer(403, [['Content-Type', 'text/html']], '<script>alert(1)</script>')));
    for (const token of [undefined, fakeJwt()]) {
      const options = token === undefined ? {} : { token };
      const html = await get('/api/core-sportbook/html401', options);
      assert.equal(html.status, 401);
      assert.equal((html.json as { ok?: boolean }).ok, false);
      assert.doesNotMatch(html.text, /script/);
      const forbidden = await get('/api/core-sportbook/html403', options);
      assert.equal(forbidden.status, 403);
      assert.doesNotMatch(forbidden.text, /script/);
      const problem = await get('/api/core-sportbook/json401', options);
      assert.equal(problem.status, 401);
      assert.equal(problem.text, '{"reason":"token_expired"}');
    }
  });
});

describe('the session cookie in any spelling', () => {
  for (const spelling of [
    '__Host-access%5Ftoken',
    '__Host-access.token',
    '__Host-access token',
    '__Host-access+token',
    '__host-access_token',
    '__Host-access[token',
  ]) {
    test(`${spelling} is not forwarded, and its value is redacted`, async () => {
      up.reset();
      let cookieSeen = '';
      up.on('/core-sportbook/echo', (socket, req) => {
        cookieSeen = req.headers.cookie ?? '';
        socket.write(rawAnswer(200, [['Content-Type', 'text/plain']], `cookie: ${req.headers.cookie ?? ''} value: ${forged}`));
      });
      const forged = fakeJwt({ forged: true });
      const res = await send(proxy.url, 'GET', '/api/core-sportbook/echo', {
        headers: { cookie: `theme=dark; ${spelling}=${forged}; _ga=GA1` },
      });
      assert.equal(res.status, 200);
      assert.equal(cookieSeen, 'theme=dark; _ga=GA1');
      assert.ok(!res.text.includes(forged), res.text);
      assert.match(res.text, /\[redacted\]/);
    });
  }

  test('every other route forwards the cookie without any spelling of the session cookie', async () => {
    up.reset();
    up.on('/auth/user-profile', json({ id: 1, userInfo: {} }));
    const jwt = fakeJwt();
    await send(proxy.url, 'GET', '/api/auth/profile', { headers: { cookie: `${COOKIE}=${jwt}; __Host-access%5Ftoken=${fakeJwt()}; a=1` } });
    const seen = up.seen.find((r) => r.path === '/auth/user-profile');
    assert.equal(seen?.headers.cookie, 'a=1');
    assert.equal(seen?.headers.authorization, `Bearer ${jwt}`);
  });
});

describe('redaction by meaning, not bytes', () => {
  const echoes: [string, (jwt: string) => [string, Buffer]][] = [
    ['UTF-16LE with its charset', (jwt) => ['text/plain; charset=utf-16le', Buffer.from(`Bearer ${jwt}`, 'utf16le')]],
    [
      'UTF-16LE with a byte-order mark only',
      (jwt) => ['text/plain', Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(`Bearer ${jwt}`, 'utf16le')])],
    ],
    [
      'UTF-16BE JSON',
      (jwt) => ['application/json; charset=utf-16be', Buffer.from(Buffer.from(JSON.stringify({ t: jwt }), 'utf16le').swap16())],
    ],
    ['standard base64 of the token', (jwt) => ['text/plain', Buffer.from(Buffer.from(jwt).toString('base64'))]],
    [
      'base64url of a JSON holding the token (offset 1)',
      (jwt) => ['text/plain', Buffer.from(Buffer.from(`{"t":"${jwt}"}`).toString('base64url'))],
    ],
    [
      'base64 of a JSON holding the token (offset 2)',
      (jwt) => ['application/json', Buffer.from(JSON.stringify({ blob: Buffer.from(`xx{"t":"${jwt}"}`).toString('base64') }))],
    ],
  ];
  for (const [label, make] of echoes) {
    for (const signedIn of [true, false]) {
      test(`${label} (${signedIn ? 'session' : 'refused cookie, streamed'}): the token never reaches the browser`, async () => {
        up.reset();
        // Without a session: a cookie value the gate refuses (two parts), still redacted as the body streams.
        const jwt = signedIn ? fakeJwt() : fakeJwt().split('.').slice(0, 2).join('.');
        up.on('/core-sportbook/echo', (socket) => {
          const [type, body] = make(jwt);
          socket.write(rawAnswer(200, [['Content-Type', type]], body));
        });
        const res = await fetch(`${proxy.url}/api/core-sportbook/echo`, { headers: { cookie: `${COOKIE}=${jwt}` } });
        assert.equal(res.status, 200);
        const bytes = Buffer.from(await res.arrayBuffer());
        // However a browser might decode the bytes: UTF-8, or UTF-16 from either byte.
        const texts = [bytes.toString('utf8'), bytes.toString('utf16le'), bytes.subarray(1).toString('utf16le')];
        for (const text of texts) {
          assert.ok(!text.includes(jwt), `${label}: the token as it is`);
          for (const form of encodedForms([jwt])) assert.ok(!text.includes(form), `${label}: a base64 form`);
        }
      });
    }
  }

  test('a charset nobody here knows is refused (502), when there is a session to redact', async () => {
    up.reset();
    up.on('/core-sportbook/odd', writes(rawAnswer(200, [['Content-Type', 'text/plain; charset=x-unknown-9']], 'text')));
    const res = await get('/api/core-sportbook/odd', { token: fakeJwt() });
    assert.equal(res.status, 502);
  });
});

describe('malformed framing is upstream_bad_response, never sent again', () => {
  const both = (body: string) =>
    writes(
      Buffer.from(
        `HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nTransfer-Encoding: chunked\r\n\r\n${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`,
      ),
    );
  test('both Content-Length and Transfer-Encoding on the profile: 502 upstream_bad_response, one upstream call', async () => {
    up.reset();
    up.on('/auth/user-profile', both('{"id":1}'));
    const res = await get('/api/auth/profile', { token: fakeJwt() });
    assert.equal(res.status, 502);
    assert.equal((res.json as { error?: string }).error, 'upstream_bad_response');
    assert.equal(up.count('/auth/user-profile'), 1);
  });
  test('both lengths on the passthrough, with and without a session: 502 upstream_bad_response, one call each', async () => {
    for (const token of [undefined, fakeJwt()]) {
      up.reset();
      up.on('/core-sportbook/both', both('{"a":1}'));
      const res = await get('/api/core-sportbook/both', token === undefined ? {} : { token });
      assert.equal(res.status, 502);
      assert.equal((res.json as { error?: string }).error, 'upstream_bad_response');
      assert.equal(up.count('/core-sportbook/both'), 1);
    }
  });
  test('a bad chunk size: 502 upstream_bad_response, one call', async () => {
    up.reset();
    up.on(
      '/auth/user-profile',
      writes(Buffer.from('HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n')),
    );
    const res = await get('/api/auth/profile', { token: fakeJwt() });
    assert.equal(res.status, 502);
    assert.equal((res.json as { error?: string }).error, 'upstream_bad_response');
    assert.equal(up.count('/auth/user-profile'), 1);
  });
});

test('a bad chunk size on the anonymous passthrough JSON (read whole): 502 upstream_bad_response', async () => {
  up.reset();
  up.on(
    '/core-sportbook/chunks',
    writes(Buffer.from('HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\nzz\r\n')),
  );
  const res = await get('/api/core-sportbook/chunks');
  assert.equal(res.status, 502);
  assert.equal((res.json as { error?: string }).error, 'upstream_bad_response');
});

test('docs/behaviour.md "Internal keys" lists INTERNAL_KEYS, row for row', async () => {
  const { readFile } = await import('node:fs/promises');
  const text = await readFile(new URL('../docs/behaviour.md', import.meta.url), 'utf8');
  const section = text.slice(text.indexOf('### Internal keys'), text.indexOf('\n**', text.indexOf('### Internal keys')));
  const rows = [...section.matchAll(/^\| (is|starts|ends) \| `(\w+)` \| (.+) \|$/gm)].map((m) => `${m[1]} ${m[2]} ${m[3]}`);
  assert.deepEqual(
    rows,
    INTERNAL_KEYS.map((r) => `${r.match} ${r.form} ${r.why}`),
  );
});
