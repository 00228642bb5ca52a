/**
 * Hardening row 18, odd upstream answers (docs/behaviour.md "Upstream answers"): a raw upstream writes, byte
 * for byte, what a real BFF — or a load balancer, CDN or WAF in front of it — may send: codings asked
 * for or not (gzip, deflate, br, zstd where the runtime has it, unknown, corrupt, bombs), broken and
 * empty JSON, a byte-order mark, deep nesting, tokens that cannot be cookies, huge headers and bodies,
 * resets mid-body, endless streams, and the headers a browser must or must not see.
 *
 * One row per case and route family (session JSON, login, refresh, catalogue, the raw passthrough with
 * and without a session, deposit, a read with side effects), each asserting over real sockets: the
 * status, the envelope and its `X-Error-Ref`, the headers, that no session cookie rides an error, that
 * the session token is in no decoding of the answer (identity, gzip, deflate, br) nor in the logs, the
 * number of upstream calls, and bounded memory for the bombs.
 */
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { after, before, test } from 'node:test';
import * as zlib from 'node:zlib';
import { fakeJwt, startProxy, type TestProxy } from '../helpers/recording-upstream.js';
import { rawAnswer, type RawRule, type RawUpstream, startRawUpstream, writes } from '../helpers/raw-upstream.js';
import { Figures } from './helpers/figures.js';

const figures = new Figures('odd-answers', 18, 'Odd upstream answers');
const JSON_TYPE: [string, string] = ['Content-Type', 'application/json'];
const USER_ID = 4242;
const PROFILE = { user: { id: USER_ID, email: 'odd@example.com', name: 'Odd Answers' }, userInfo: { currency: 'BRL' } };
const PROFILE_TEXT = JSON.stringify(PROFILE);
const CATALOGUE_TEXT = JSON.stringify({ data: [{ slug: 'odd-game', name: 'Odd' }], total: 1 });
const COOKIE = 'access_token';
/** Every session token a case used: none may appear in any answer or log line. */
const tokens: string[] = [];
const hasZstd = typeof (zlib as { zstdCompressSync?: unknown }).zstdCompressSync === 'function';

let up: RawUpstream;
let proxy: TestProxy;

before(async () => {
  up = await startRawUpstream();
  proxy = await startProxy(up.url, { UPSTREAM_TIMEOUT_MS: '3000', UPSTREAM_CIRCUIT_FAILURES: '0', CATALOGUE_CACHE_TTL_MS: '60000' });
});
after(async () => {
  await proxy?.close();
  await up?.close();
  const logs = proxy.logs.lines.join('\n');
  const leaked = tokens.filter((t) => logs.includes(t)).length;
  figures.canaryOccurrences += leaked;
  figures.check(leaked === 0, `${leaked} session tokens appear in the logs`);
  figures.write();
});

/** A fresh session token, remembered for the leak checks. */
function session(): string {
  const token = fakeJwt({ sub: String(USER_ID), case: Math.random().toString(36).slice(2) });
  tokens.push(token);
  return token;
}

/** An answer as the browser gets it: status, headers, body bytes, and whether the connection was cut. */
interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  /** The connection ended before the whole answer (no final chunk, or fewer bytes than declared). */
  cut: boolean;
}

function call(method: string, path: string, options: { token?: string; json?: unknown } = {}): Promise<Answer> {
  const url = new URL(path, proxy.url);
  const headers: Record<string, string> = { 'accept-encoding': 'gzip, deflate, br' };
  if (options.token) headers.cookie = `${COOKIE}=${options.token}`;
  const body = options.json === undefined ? undefined : JSON.stringify(options.json);
  if (body !== undefined) headers['content-type'] = 'application/json';
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      let cut = false;
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('aborted', () => {
        cut = true;
      });
      res.on('error', () => {
        cut = true;
      });
      res.on('close', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks), cut: cut || !res.complete }),
      );
    });
    req.setTimeout(15_000, () => req.destroy(new Error(`${method} ${path} timed out`)));
    req.on('error', reject);
    req.end(body);
  });
}

/** Every way the browser could decode `body`: as it is, and as each coding that decodes it. */
function decodings(body: Buffer): string[] {
  const out = [body.toString('latin1')];
  for (const decode of [zlib.gunzipSync, zlib.inflateSync, zlib.inflateRawSync, zlib.brotliDecompressSync]) {
    try {
      out.push(decode(body, { maxOutputLength: 64 * 1024 * 1024 }).toString('latin1'));
    } catch {
      // not this coding
    }
  }
  return out;
}

/** Checks shared by every case: no token anywhere in the answer, no session cookie on an error, a reference on an error. */
function checkCommon(label: string, answer: Answer): void {
  // The session cookie itself is the one place a token may be; every other header and the body are checked.
  const { 'set-cookie': setCookieHeader, ...others } = answer.headers;
  const cookies = ([] as string[]).concat(setCookieHeader ?? []).filter((c) => !c.startsWith(`${COOKIE}=`));
  for (const text of [...decodings(answer.body), JSON.stringify(others), cookies.join('\n')]) {
    for (const token of tokens) {
      if (text.includes(token)) {
        figures.canaryOccurrences++;
        assert.fail(`${label}: the session token reached the browser`);
      }
    }
  }
  const setCookie = ([] as string[]).concat(answer.headers['set-cookie'] ?? []);
  const sessionCookie = setCookie.find((c) => c.startsWith(`${COOKIE}=`) && !c.startsWith(`${COOKIE}=;`));
  if (answer.status >= 400) {
    assert.equal(sessionCookie, undefined, `${label}: an error answer carries the session cookie`);
    assert.match(String(answer.headers['x-error-ref']), /^EP\d{4}-EM\d{4}$/, `${label}: X-Error-Ref`);
  }
  const coding = answer.headers['content-encoding'];
  if (coding !== undefined) {
    assert.ok(['gzip', 'br', 'deflate'].includes(String(coding)), `${label}: Content-Encoding ${String(coding)}`);
    assert.ok(decodings(answer.body).length > 1, `${label}: coded bytes that do not decode as ${String(coding)}`);
  }
}

function json(answer: Answer): unknown {
  const coding = answer.headers['content-encoding'];
  const body =
    coding === 'gzip'
      ? zlib.gunzipSync(answer.body)
      : coding === 'br'
        ? zlib.brotliDecompressSync(answer.body)
        : coding === 'deflate'
          ? zlib.inflateSync(answer.body)
          : answer.body;
  return JSON.parse(body.toString('utf8'));
}

function errorOf(answer: Answer): unknown {
  return (json(answer) as { error?: unknown }).error;
}

const coded = {
  gzip: (text: string | Buffer) => zlib.gzipSync(text),
  deflate: (text: string | Buffer) => zlib.deflateSync(text),
  br: (text: string | Buffer) => zlib.brotliCompressSync(text),
} as const;

/** A JSON answer with `coding` applied. */
function codedJson(status: number, coding: keyof typeof coded, text: string): Buffer {
  return rawAnswer(status, [JSON_TYPE, ['Content-Encoding', coding]], coded[coding](text));
}

const okJson = (text: string | Buffer, status = 200) => rawAnswer(status, [JSON_TYPE], text);

/** Good profile and login defaults, then the case's own rules. */
function arrange(rules: Record<string, RawRule> = {}): void {
  up.reset();
  up.on('/auth/user-profile', writes(okJson(PROFILE_TEXT)));
  for (const [prefix, rule] of Object.entries(rules)) up.on(prefix, rule);
}

/** One row of the table: runs it, counts its status, checks what every row checks. */
async function row(label: string, send: () => Promise<Answer>, expect: (answer: Answer) => void | Promise<void>): Promise<Answer> {
  figures.inputs++;
  figures.faults++;
  const answer = await send();
  figures.status(answer.cut ? `${answer.status} cut` : answer.status);
  try {
    checkCommon(label, answer);
    await expect(answer);
  } catch (error) {
    figures.fail(`${label}: ${(error as Error).message}`);
    throw error;
  }
  return answer;
}

const profile = (token = session()) => call('GET', '/api/auth/profile', { token });

// --- session JSON (GET /api/auth/profile → GET /auth/user-profile) ---

for (const coding of ['gzip', 'deflate', 'br'] as const) {
  test(`profile answered ${coding} without being asked: decoded, answered as JSON`, async () => {
    arrange({ '/auth/user-profile': writes(codedJson(200, coding, PROFILE_TEXT)) });
    await row(`profile ${coding}`, profile, (a) => {
      assert.equal(a.status, 200);
      assert.deepEqual(json(a), PROFILE);
    });
    assert.equal(up.seen[0]?.headers['accept-encoding'], 'identity', 'the proxy asks for identity');
  });
}

test(
  'profile answered zstd: decoded where the runtime has it, else 502 upstream_bad_response',
  { skip: hasZstd ? false : 'this runtime has no zstd' },
  async () => {
    const zstd = (zlib as unknown as { zstdCompressSync: (b: Buffer) => Buffer }).zstdCompressSync(Buffer.from(PROFILE_TEXT));
    arrange({ '/auth/user-profile': writes(rawAnswer(200, [JSON_TYPE, ['Content-Encoding', 'zstd']], zstd)) });
    await row('profile zstd', profile, (a) => {
      assert.equal(a.status, 200);
      assert.deepEqual(json(a), PROFILE);
    });
  },
);

test('profile in an unknown coding: 502 upstream_bad_response', async () => {
  arrange({ '/auth/user-profile': writes(rawAnswer(200, [JSON_TYPE, ['Content-Encoding', 'snappy']], 'xx')) });
  await row('profile unknown coding', profile, (a) => {
    assert.equal(a.status, 502);
    assert.equal(errorOf(a), 'upstream_bad_response');
  });
});

test('profile labelled gzip that is not: 502 upstream_bad_response', async () => {
  arrange({ '/auth/user-profile': writes(rawAnswer(200, [JSON_TYPE, ['Content-Encoding', 'gzip']], PROFILE_TEXT)) });
  await row('profile corrupt gzip', profile, (a) => {
    assert.equal(a.status, 502);
    assert.equal(errorOf(a), 'upstream_bad_response');
  });
});

test('a truncated profile is 502 upstream_bad_response and is never cached', async () => {
  arrange({ '/auth/user-profile': writes(okJson(PROFILE_TEXT.slice(0, 40))) });
  const token = session();
  for (let i = 0; i < 2; i++) {
    await row(
      'profile truncated',
      () => profile(token),
      (a) => {
        assert.equal(a.status, 502);
        assert.equal(errorOf(a), 'upstream_bad_response');
      },
    );
  }
  assert.equal(up.count('/auth/user-profile'), 2, 'each read reached the BFF: nothing was cached');
  // Once the BFF heals, a deposit finds the user id at once.
  up.on('/auth/user-profile', writes(okJson(PROFILE_TEXT)));
  up.on('/wallet/add-credit', writes(okJson('{"status":"pending","id":"dep-1"}', 201)));
  await row(
    'deposit after a truncated profile',
    () => deposit(token),
    (a) => assert.equal(a.status, 201),
  );
});

test('a profile with a UTF-8 byte-order mark is read (RFC 8259 §8.1)', async () => {
  arrange({ '/auth/user-profile': writes(okJson(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(PROFILE_TEXT)]))) });
  await row('profile BOM', profile, (a) => {
    assert.equal(a.status, 200);
    assert.deepEqual(json(a), PROFILE);
  });
});

for (const [label, bytes] of [
  ['200 without a body', okJson('')],
  ['204', rawAnswer(204, [], '', { length: false })],
] as const) {
  test(`an empty profile (${label}) is 502 upstream_bad_response: the body is needed`, async () => {
    arrange({ '/auth/user-profile': writes(bytes) });
    await row(`profile empty ${label}`, profile, (a) => {
      assert.equal(a.status, 502);
      assert.equal(errorOf(a), 'upstream_bad_response');
    });
  });
}

test('a profile with a 70 KB header: 502 upstream_bad_response, sent to the BFF once', async () => {
  arrange({ '/auth/user-profile': writes(rawAnswer(200, [JSON_TYPE, ['X-Padding', 'p'.repeat(70_000)]], PROFILE_TEXT)) });
  await row('profile 70 KB header', profile, (a) => {
    assert.equal(a.status, 502);
    assert.equal(errorOf(a), 'upstream_bad_response');
  });
  assert.equal(up.count('/auth/user-profile'), 1, 'an answer arrived: it is never sent again');
});

test('a reset in the middle of the body is upstream_unavailable', async () => {
  arrange({
    '/auth/user-profile': (socket) => {
      socket.write(rawAnswer(200, [JSON_TYPE, ['Content-Length', '1000']], PROFILE_TEXT.slice(0, 30)));
      setTimeout(() => socket.resetAndDestroy(), 20);
    },
  });
  await row('profile reset mid-body', profile, (a) => {
    assert.equal(a.status, 502);
    assert.equal(errorOf(a), 'upstream_unavailable');
  });
});

test('upstream 503 and 429 keep their Retry-After; a 401 passed through keeps WWW-Authenticate; internal headers never pass', async () => {
  const internal: [string, string][] = [
    ['Set-Cookie', 'bff_internal=1; Path=/'],
    ['Server', 'bff/1.2.3'],
    ['X-Powered-By', 'Express'],
  ];
  arrange({ '/auth/user-profile': writes(rawAnswer(503, [JSON_TYPE, ['Retry-After', '7'], ...internal], '{"message":"maintenance"}')) });
  await row('profile 503 Retry-After', profile, (a) => {
    assert.equal(a.status, 503);
    assert.equal(a.headers['retry-after'], '7');
    for (const [name] of internal) assert.equal(a.headers[name.toLowerCase()], undefined, name);
  });
  arrange({ '/auth/user-profile': writes(rawAnswer(429, [JSON_TYPE, ['Retry-After', '12']], '{"message":"slow down"}')) });
  await row('profile 429 Retry-After', profile, (a) => {
    assert.equal(a.status, 429);
    assert.equal(a.headers['retry-after'], '12');
  });
  const body = '{"reason":"token_expired"}';
  arrange({
    '/auth/user-profile': writes(
      rawAnswer(401, [JSON_TYPE, ['WWW-Authenticate', 'Bearer realm="bff", error="invalid_token"'], ...internal], body),
    ),
  });
  await row('profile 401 WWW-Authenticate', profile, (a) => {
    assert.equal(a.status, 401);
    assert.equal(a.body.toString(), body, 'the 401 body byte for byte');
    assert.equal(a.headers['www-authenticate'], 'Bearer realm="bff", error="invalid_token"');
    for (const [name] of internal) assert.equal(a.headers[name.toLowerCase()], undefined, name);
  });
});

/** Samples this process's RSS while `run` lasts; returns the growth of the peak over the start, in MB. */
async function rssGrowth(run: () => Promise<unknown>): Promise<number> {
  globalThis.gc?.();
  const start = process.memoryUsage.rss();
  let peak = start;
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage.rss());
  }, 5);
  try {
    await run();
  } finally {
    clearInterval(timer);
  }
  peak = Math.max(peak, process.memoryUsage.rss());
  return (peak - start) / 1e6;
}

test('bombs: a small gzip or br answer that inflates to 256 MiB / 1 GiB is 502 upstream_response_too_large, memory bounded', async () => {
  const gzipBomb = zlib.gzipSync(Buffer.alloc(256 * 1024 * 1024), { level: 1 });
  const brBomb = zlib.brotliCompressSync(Buffer.alloc(1024 * 1024 * 1024), { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 1 } });
  const growths: string[] = [];
  for (const [coding, bomb, prefix, send] of [
    ['gzip', gzipBomb, '/auth/user-profile', () => profile()],
    ['br', brBomb, '/casino-games/list/', () => call('GET', '/api/games/list?page=1&per_page=24')],
  ] as const) {
    arrange({ [prefix]: writes(rawAnswer(200, [JSON_TYPE, ['Content-Encoding', coding]], bomb)) });
    let answer: Answer | undefined;
    const growth = await rssGrowth(async () => {
      answer = await row(`${coding} bomb (${bomb.length} bytes coded)`, send, (a) => {
        assert.equal(a.status, 502);
        assert.equal(errorOf(a), 'upstream_response_too_large');
      });
    });
    assert.ok(answer);
    growths.push(`${coding} ${bomb.length} B → +${growth.toFixed(0)} MB RSS`);
    assert.ok(growth < 96, `${coding} bomb: RSS grew ${growth.toFixed(0)} MB`);
  }
  figures.memory = growths.join('; ');
});

// --- login, registration and refresh: the session comes only from a whole, valid answer ---

const credentials = { login: 'odd@example.com', password: 'Odd#2026' };
const login = () => call('POST', '/api/auth/login', { json: credentials });

/** A LoginResponse carrying `token` (spec 2.5), as text. */
function loginText(token: string, extra = ''): string {
  return `{"access_token":${JSON.stringify(token)},"expires_in":3600,"token_type":"bearer","user":{"id":${USER_ID}}${extra}}`;
}

function sessionCookieOf(a: Answer): string | undefined {
  return ([] as string[]).concat(a.headers['set-cookie'] ?? []).find((c) => c.startsWith(`${COOKIE}=`));
}

test('login answered gzip: the session is set, the token is not in the body', async () => {
  const token = session();
  arrange({ '/auth/login': writes(codedJson(200, 'gzip', loginText(token))) });
  await row('login gzip', login, (a) => {
    assert.equal(a.status, 200);
    assert.ok(sessionCookieOf(a)?.startsWith(`${COOKIE}=${token};`), 'session cookie set');
    assert.equal((json(a) as { user: { id: number } }).user.id, USER_ID);
  });
});

test('login with a UTF-8 byte-order mark opens a session', async () => {
  const token = session();
  arrange({ '/auth/login': writes(okJson(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(loginText(token))]))) });
  await row('login BOM', login, (a) => {
    assert.equal(a.status, 200);
    assert.ok(sessionCookieOf(a)?.startsWith(`${COOKIE}=${token};`));
  });
});

for (const [label, text] of [
  ['nested 10,000 deep', (t: string) => loginText(t, `,"deep":${'['.repeat(10_000)}${']'.repeat(10_000)}`)],
  ['truncated', (t: string) => loginText(t).slice(0, 60)],
  ['empty', () => ''],
  ['an access_token with ";"', (t: string) => loginText(`${t};Domain=evil.example`)],
  ['an access_token with CR LF', (t: string) => loginText(`${t}\r\nX-Injected: 1`)],
  ['an opaque access_token', () => loginText('opaque-session-token-0123456789abcdef')],
] as const) {
  test(`a login answer ${label} is 502 upstream_bad_response and opens no session`, async () => {
    arrange({ '/auth/login': writes(okJson(text(session()))) });
    await row(`login ${label}`, login, (a) => {
      assert.equal(a.status, 502);
      assert.equal(errorOf(a), 'upstream_bad_response');
      assert.equal(sessionCookieOf(a), undefined, 'no session cookie');
    });
  });
}

test('registration answered with an access_token that cannot be a cookie: 502, no session', async () => {
  arrange({ '/bff/register-simplified': writes(okJson(loginText(`${session()};x`))) });
  const body = { email: 'new@example.com', password: 'Odd#2026', country: 'BR', nationalities: '["BR"]', optIn: true };
  await row(
    'registration bad token',
    () => call('POST', '/api/auth/register', { json: body }),
    (a) => {
      assert.equal(a.status, 502);
      assert.equal(errorOf(a), 'upstream_bad_response');
      assert.equal(sessionCookieOf(a), undefined, 'no session cookie');
    },
  );
  assert.equal(up.count('/bff/register-simplified'), 1);
});

for (const [label, rule, status] of [
  ['gzip', (t: string) => writes(codedJson(200, 'gzip', `{"access_token":${JSON.stringify(t)},"expires_in":3600}`)), 200],
  ['empty', () => writes(okJson('')), 502],
  ['with a token that is not a JWT', () => writes(okJson('{"access_token":"not a jwt; Path=/"}')), 502],
] as const) {
  test(`refresh answered ${label}: ${status}`, async () => {
    const fresh = session();
    arrange({ '/users/refresh-token': rule(fresh) });
    await row(
      `refresh ${label}`,
      () => call('POST', '/api/auth/refresh', { token: session() }),
      (a) => {
        assert.equal(a.status, status);
        if (status === 200) assert.ok(sessionCookieOf(a)?.startsWith(`${COOKIE}=${fresh};`));
        else assert.equal(sessionCookieOf(a), undefined);
      },
    );
  });
}

// --- catalogue ---

const catalogue = (page: number) => call('GET', `/api/games/list?page=${page}&per_page=24`);

test('catalogue answered br: decoded, cached, answered in the proxy’s own codings', async () => {
  arrange({ '/casino-games/list/': writes(codedJson(200, 'br', CATALOGUE_TEXT)) });
  await row(
    'catalogue br',
    () => catalogue(101),
    (a) => {
      assert.equal(a.status, 200);
      assert.deepEqual(json(a), JSON.parse(CATALOGUE_TEXT));
    },
  );
});

test('broken catalogue JSON is 502 upstream_bad_response and is never cached', async () => {
  arrange({ '/casino-games/list/': writes(okJson(CATALOGUE_TEXT.slice(0, 25))) });
  for (let i = 0; i < 2; i++) {
    await row(
      'catalogue truncated',
      () => catalogue(102),
      (a) => {
        assert.equal(a.status, 502);
        assert.equal(errorOf(a), 'upstream_bad_response');
      },
    );
  }
  assert.equal(up.count('/casino-games/list/'), 2, 'nothing cached');
});

// --- the raw passthrough (GET /api/core-sportbook/*) ---

test('passthrough with a session, answered gzip echoing the Bearer: decoded, token redacted, no coding left', async () => {
  const token = session();
  arrange({
    '/core-sportbook/': (socket, req) =>
      socket.write(
        rawAnswer(200, [JSON_TYPE, ['Content-Encoding', 'gzip']], zlib.gzipSync(`{"echo":"${req.headers.authorization ?? ''}"}`)),
      ),
  });
  await row(
    'passthrough session gzip echo',
    () => call('GET', '/api/core-sportbook/events?x=1', { token }),
    (a) => {
      assert.equal(a.status, 200);
      assert.equal(a.headers['content-encoding'], undefined);
      assert.equal((json(a) as { echo: string }).echo, 'Bearer [redacted]');
    },
  );
});

test('passthrough without a session, answered br: the browser gets readable bytes and a documented header set', async () => {
  arrange({
    '/core-sportbook/': writes(
      rawAnswer(
        200,
        [
          JSON_TYPE,
          ['Content-Encoding', 'br'],
          ['Content-Language', 'pt-BR'],
          ['Set-Cookie', 'x=1'],
          ['Server', 'bff'],
          ['X-Powered-By', 'PHP'],
          ['Keep-Alive', 'timeout=5'],
        ],
        zlib.brotliCompressSync('{"events":[1,2,3]}'),
      ),
    ),
  });
  await row(
    'passthrough anonymous br',
    () => call('GET', '/api/core-sportbook/events'),
    (a) => {
      assert.equal(a.status, 200);
      assert.deepEqual(json(a), { events: [1, 2, 3] });
      assert.equal(a.headers['content-language'], 'pt-BR');
      for (const name of ['set-cookie', 'server', 'x-powered-by', 'keep-alive']) assert.equal(a.headers[name], undefined, name);
    },
  );
});

test('passthrough declaring 64 MiB: 502 upstream_response_too_large before anything is sent', async () => {
  arrange({
    '/core-sportbook/': (socket) => socket.write(rawAnswer(200, [JSON_TYPE, ['Content-Length', String(64 * 1024 * 1024)]], '{"a":')),
  });
  await row(
    'passthrough declared 64 MiB',
    () => call('GET', '/api/core-sportbook/big'),
    (a) => {
      assert.equal(a.status, 502);
      assert.equal(errorOf(a), 'upstream_response_too_large');
      assert.equal(a.cut, false);
    },
  );
});

test('passthrough in an unknown coding: 502 upstream_bad_response', async () => {
  arrange({ '/core-sportbook/': writes(rawAnswer(200, [JSON_TYPE, ['Content-Encoding', 'x-custom']], 'zz')) });
  await row(
    'passthrough unknown coding',
    () => call('GET', '/api/core-sportbook/odd'),
    (a) => {
      assert.equal(a.status, 502);
      assert.equal(errorOf(a), 'upstream_bad_response');
    },
  );
});

test('passthrough whose stream runs over the limit: the client’s connection ends without the final chunk', async () => {
  arrange({
    '/core-sportbook/': (socket) => {
      socket.write(
        rawAnswer(
          200,
          [
            ['Content-Type', 'application/octet-stream'],
            ['Transfer-Encoding', 'chunked'],
          ],
          '',
        ),
      );
      const chunk = Buffer.alloc(64 * 1024, 0x61);
      let sent = 0;
      const push = () => {
        // Bounded: 8 MiB at most (twice the 4 MiB limit), then the connection is left to the proxy.
        while (sent < 8 * 1024 * 1024 && !socket.destroyed) {
          sent += chunk.length;
          if (!socket.write(Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')]))) {
            socket.once('drain', push);
            return;
          }
        }
      };
      push();
    },
  });
  await row(
    'passthrough runs over',
    () => call('GET', '/api/core-sportbook/endless'),
    (a) => {
      assert.equal(a.status, 200);
      assert.equal(a.cut, true, 'the answer was cut, not ended');
      assert.ok(a.body.length <= 4 * 1024 * 1024, `${a.body.length} bytes passed`);
    },
  );
});

test('passthrough whose stream resets after the headers: the client’s connection is cut', async () => {
  arrange({
    '/core-sportbook/': (socket) => {
      socket.write(
        rawAnswer(
          200,
          [
            ['Content-Type', 'application/octet-stream'],
            ['Content-Length', '5000'],
          ],
          'partial',
        ),
      );
      setTimeout(() => socket.resetAndDestroy(), 20);
    },
  });
  await row(
    'passthrough reset mid-body',
    () => call('GET', '/api/core-sportbook/reset'),
    (a) => {
      assert.equal(a.status, 200);
      assert.equal(a.cut, true);
    },
  );
});

test('passthrough JSON whose stream resets after the headers: read whole before it is sent, so 502 upstream_unavailable', async () => {
  arrange({
    '/core-sportbook/': (socket) => {
      socket.write(rawAnswer(200, [JSON_TYPE, ['Content-Length', '5000']], '{"partial":'));
      setTimeout(() => socket.resetAndDestroy(), 20);
    },
  });
  await row(
    'passthrough JSON reset mid-body',
    () => call('GET', '/api/core-sportbook/reset'),
    (a) => {
      assert.equal(a.status, 502);
      assert.equal((JSON.parse(a.body.toString()) as { error?: string }).error, 'upstream_unavailable');
    },
  );
});

// --- deposit ---

function deposit(token: string): Promise<Answer> {
  return call('POST', '/api/payments/deposit', {
    token,
    json: { userId: USER_ID, creditAmount: 5000, paymentMethod: 'pix', currency: 'BRL' },
  });
}

test('deposit answered gzip: decoded and answered; answered truncated: 502 upstream_bad_response', async () => {
  arrange({ '/wallet/add-credit': writes(codedJson(201, 'gzip', '{"status":"pending","id":"dep-2","qr_code":"000201"}')) });
  await row(
    'deposit gzip',
    () => deposit(session()),
    (a) => {
      assert.equal(a.status, 201);
      assert.equal((json(a) as { id?: string }).id, 'dep-2');
    },
  );
  arrange({ '/wallet/add-credit': writes(okJson('{"status":"pending","id":"de', 201)) });
  await row(
    'deposit truncated',
    () => deposit(session()),
    (a) => {
      assert.equal(a.status, 502);
      assert.equal(errorOf(a), 'upstream_bad_response');
    },
  );
  assert.equal(up.count('/wallet/add-credit'), 1, 'a money move is sent once');
});

// --- a read with side effects (GET /api/games/start) ---

test('a game start whose connection resets before any answer byte is not sent again', async () => {
  arrange({ '/start-game-v2': (socket) => socket.resetAndDestroy() });
  await row(
    'game start reset',
    () => call('GET', '/api/games/start?slug=odd-game', { token: session() }),
    (a) => {
      assert.equal(a.status, 502);
      assert.equal(errorOf(a), 'upstream_unavailable');
    },
  );
  assert.equal(up.count('/start-game-v2'), 1, 'side effects: never retried');
  // A plain read in the same fault is sent once more (docs/behaviour.md "Resilience", "Retries").
  arrange({ '/auth/user-profile': (socket) => socket.resetAndDestroy() });
  await row('profile reset before answer', profile, (a) => assert.equal(a.status, 502));
  assert.equal(up.count('/auth/user-profile'), 2, 'a plain read is retried once');
});

// --- interim answers (RFC 9110 §15.2): read and dropped ---

/** `interim` (one or more 1xx heads) then `final`, in one write: what a CDN with Early Hints sends. */
function afterInterim(interim: string, final: Buffer): RawRule {
  return writes(Buffer.concat([Buffer.from(interim, 'latin1'), final]));
}

const EARLY_HINTS = 'HTTP/1.1 103 Early Hints\r\nLink: </app.css>; rel=preload; as=style\r\n\r\n';

for (const [label, interim] of [
  ['a 103 Early Hints', EARLY_HINTS],
  ['two 103s and a 102', `${EARLY_HINTS}HTTP/1.1 102 Processing\r\n\r\n${EARLY_HINTS}`],
] as const) {
  test(`${label} before the final answer is dropped: profile, passthrough (with and without a session), deposit`, async () => {
    arrange({
      '/auth/user-profile': afterInterim(interim, okJson(PROFILE_TEXT)),
      '/core-sportbook/': afterInterim(interim, okJson('{"events":[7]}')),
      '/wallet/add-credit': afterInterim(interim, okJson('{"status":"pending","id":"dep-103"}', 201)),
    });
    await row(`profile after ${label}`, profile, (a) => {
      assert.equal(a.status, 200);
      assert.deepEqual(json(a), PROFILE);
      assert.equal(a.headers.link, undefined, 'the interim answer’s headers are not the answer’s');
    });
    await row(
      `passthrough anonymous after ${label}`,
      () => call('GET', '/api/core-sportbook/early'),
      (a) => {
        assert.equal(a.status, 200);
        assert.deepEqual(json(a), { events: [7] });
      },
    );
    await row(
      `passthrough session after ${label}`,
      () => call('GET', '/api/core-sportbook/early', { token: session() }),
      (a) => {
        assert.equal(a.status, 200);
        assert.deepEqual(json(a), { events: [7] });
      },
    );
    await row(
      `deposit after ${label}`,
      () => deposit(session()),
      (a) => {
        assert.equal(a.status, 201);
        assert.equal((json(a) as { id?: string }).id, 'dep-103');
      },
    );
    assert.equal(up.count('/wallet/add-credit'), 1, 'a money move is sent once');
    // The connection is still usable: the next read on it is answered.
    up.on('/auth/user-profile', writes(okJson(PROFILE_TEXT)));
    await row(`profile after ${label}, next`, profile, (a) => assert.equal(a.status, 200));
  });
}

test('a 100 Continue nobody asked for: undici closes the connection, 502 upstream_unavailable (known limit)', async () => {
  // undici (7.x) destroys the connection on a 100 it did not ask for, before any handler sees it:
  // the one interim answer the proxy cannot drop. This row notices when that changes.
  arrange({ '/core-sportbook/': afterInterim('HTTP/1.1 100 Continue\r\n\r\n', okJson('{"events":[]}')) });
  await row(
    'passthrough after 100 Continue',
    () => call('GET', '/api/core-sportbook/continue'),
    (a) => {
      assert.equal(a.status, 502);
      assert.equal(errorOf(a), 'upstream_unavailable');
    },
  );
});

// --- a connection that ends in the middle of an answer: upstream_unavailable wherever it ends ---

for (const [label, head, body, end] of [
  [
    'Content-Length, Connection: close, reset',
    [
      ['Content-Length', '1000'],
      ['Connection', 'close'],
    ],
    '{"user":{"id":42',
    'reset',
  ],
  [
    'Content-Length, Connection: close, FIN',
    [
      ['Content-Length', '1000'],
      ['Connection', 'close'],
    ],
    '{"user":{"id":42',
    'fin',
  ],
  [
    'chunked, Connection: close, reset',
    [
      ['Transfer-Encoding', 'chunked'],
      ['Connection', 'close'],
    ],
    '10\r\n{"user":{"id":42',
    'reset',
  ],
  ['chunked, keep-alive, reset', [['Transfer-Encoding', 'chunked']], '10\r\n{"user":{"id":42', 'reset'],
  ['Content-Length, keep-alive, FIN', [['Content-Length', '1000']], '{"user":{"id":42', 'fin'],
] as const) {
  test(`a connection ended mid-body (${label}) is upstream_unavailable: profile and deposit`, async () => {
    const cut =
      (status: number): RawRule =>
      (socket) => {
        socket.write(rawAnswer(status, [JSON_TYPE, ...head.map(([n, v]) => [n, v] as [string, string])], body));
        setTimeout(() => (end === 'reset' ? socket.resetAndDestroy() : socket.end()), 20);
      };
    arrange({ '/auth/user-profile': cut(200) });
    await row(`profile ${label}`, profile, (a) => {
      assert.equal(a.status, 502);
      assert.equal(errorOf(a), 'upstream_unavailable');
    });
    assert.equal(up.count('/auth/user-profile'), 1, 'an answer had started: the read is not sent again');
    // The deposit reads the profile first (its user id): a whole one here, then its own answer is cut.
    arrange({ '/wallet/add-credit': cut(201) });
    await row(
      `deposit ${label}`,
      () => deposit(session()),
      (a) => {
        assert.equal(a.status, 502);
        assert.equal(errorOf(a), 'upstream_unavailable');
      },
    );
    assert.equal(up.count('/wallet/add-credit'), 1, 'a money move is sent once');
  });
}

// --- coded answers without content ---

const GZIP: [string, string] = ['Content-Encoding', 'gzip'];
const LAST_GAMES = () => call('GET', '/api/user/last-casino-games', { token: session() });

test('a coded 204 stays a 204 without its coding: passthrough (with and without a session) and a JSON route', async () => {
  arrange({
    '/core-sportbook/': writes(rawAnswer(204, [GZIP], '', { length: false })),
    '/bff/games/user-last-casino-games-dl': writes(rawAnswer(204, [GZIP], '', { length: false })),
  });
  for (const [label, send] of [
    ['passthrough anonymous', () => call('GET', '/api/core-sportbook/none')],
    ['passthrough session', () => call('GET', '/api/core-sportbook/none', { token: session() })],
    ['JSON route', LAST_GAMES],
  ] as const) {
    await row(`coded 204, ${label}`, send, (a) => {
      assert.equal(a.status, 204);
      assert.equal(a.body.length, 0);
      assert.equal(a.headers['content-encoding'], undefined);
    });
  }
});

test('a coded 304 is answered as the same 304 without a coding is', async () => {
  const answers: number[] = [];
  for (const headers of [[GZIP, ['ETag', '"v1"']], [['ETag', '"v1"']]] as [string, string][][]) {
    arrange({ '/core-sportbook/': writes(rawAnswer(304, headers, '', { length: false })) });
    const a = await row(
      `304 ${headers.length === 2 ? 'gzip' : 'plain'}`,
      () => call('GET', '/api/core-sportbook/cond'),
      (x) => {
        assert.notEqual(errorOf(x), 'upstream_bad_response', 'never "a coding the proxy cannot read"');
      },
    );
    answers.push(a.status);
  }
  assert.equal(answers[0], answers[1]);
});

for (const [label, empty] of [
  ['Content-Length: 0', (status: number) => rawAnswer(status, [JSON_TYPE, GZIP, ['Content-Length', '0']], '')],
  [
    'a chunked body without a byte',
    (status: number) => rawAnswer(status, [JSON_TYPE, GZIP, ['Transfer-Encoding', 'chunked']], '0\r\n\r\n'),
  ],
] as const) {
  test(`a gzip 2xx with an empty body (${label}) follows the empty-answer rule`, async () => {
    arrange({
      '/bff/games/user-last-casino-games-dl': writes(empty(201)),
      '/auth/user-profile': writes(empty(200)),
      '/auth/login': writes(empty(200)),
      '/users/refresh-token': writes(empty(200)),
      '/bff/register-simplified': writes(empty(201)),
      '/core-sportbook/': writes(empty(200)),
    });
    await row(`gzip empty, JSON route (${label})`, LAST_GAMES, (a) => {
      assert.equal(a.status, 201, 'the upstream status');
      assert.deepEqual(json(a), { ok: true });
    });
    await row(
      `gzip empty, passthrough (${label})`,
      () => call('GET', '/api/core-sportbook/empty'),
      (a) => {
        assert.equal(a.status, 200);
        assert.equal(a.body.length, 0);
        assert.equal(a.headers['content-encoding'], undefined);
      },
    );
    const needed: [string, () => Promise<Answer>][] = [
      ['profile', profile],
      ['login', login],
      ['refresh', () => call('POST', '/api/auth/refresh', { token: session() })],
      [
        'registration',
        () =>
          call('POST', '/api/auth/register', {
            json: { email: 'new@example.com', password: 'Odd#2026', country: 'BR', nationalities: '["BR"]', optIn: true },
          }),
      ],
    ];
    for (const [name, send] of needed) {
      await row(`gzip empty, ${name} (${label})`, send, (a) => {
        assert.equal(a.status, 502, 'the body is needed');
        assert.equal(errorOf(a), 'upstream_bad_response');
        assert.equal(sessionCookieOf(a), undefined);
      });
    }
  });
}

// --- the proxy's verdicts never open a circuit (docs/behaviour.md "Resilience") ---

test('20 answers one client provokes into 502 (unknown coding, coded 204 of old, declared 64 MiB) open no circuit: another user’s read is 200', async () => {
  // The default breaker (5 failures in a row), on a proxy of its own.
  const guarded = await startProxy(up.url, { UPSTREAM_TIMEOUT_MS: '3000' });
  try {
    arrange({
      '/core-sportbook/garbled': writes(rawAnswer(200, [JSON_TYPE, ['Content-Encoding', 'x-custom']], 'zz')),
      '/core-sportbook/huge': writes(rawAnswer(200, [JSON_TYPE, ['Content-Length', String(64 * 1024 * 1024)]], '{"a":')),
      '/core-sportbook/events': writes(okJson('{"events":[1]}')),
    });
    const viaGuarded = (path: string, token?: string) => {
      const url = new URL(path, guarded.url);
      return new Promise<Answer>((resolve, reject) => {
        const headers: Record<string, string> = token ? { cookie: `${COOKIE}=${token}` } : {};
        const req = httpRequest(url, { headers, agent: false }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('close', () =>
            resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks), cut: !res.complete }),
          );
        });
        req.on('error', reject);
        req.end();
      });
    };
    const attacker = session();
    const verdicts = new Map<string, number>();
    for (let i = 0; i < 20; i++) {
      const a = await row(
        `provoked 502 #${i + 1}`,
        () => viaGuarded(i % 2 === 0 ? '/api/core-sportbook/garbled' : '/api/core-sportbook/huge', i % 4 < 2 ? attacker : undefined),
        (x) => {
          assert.equal(x.status, 502);
        },
      );
      const error = String(errorOf(a));
      verdicts.set(error, (verdicts.get(error) ?? 0) + 1);
    }
    assert.deepEqual([...verdicts.keys()].sort(), ['upstream_bad_response', 'upstream_response_too_large']);
    await row(
      'another user’s read after 20 provoked 502s',
      () => viaGuarded('/api/core-sportbook/events', session()),
      (a) => {
        assert.equal(a.status, 200, `the circuit stayed closed (got ${a.status} ${String(a.headers['x-error-ref'] ?? '')})`);
        assert.deepEqual(json(a), { events: [1] });
      },
    );
    figures.note(
      `20 provoked 502s (${[...verdicts].map(([k, v]) => `${k}×${v}`).join(', ')}) with UPSTREAM_CIRCUIT_FAILURES=5, then another user's passthrough read: 200`,
    );
  } finally {
    await guarded.close();
  }
});
