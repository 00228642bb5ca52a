/**
 * Hardening row 3, header abuse (docs/behaviour.md "Upstream requests": headers sent by the browser never
 * override the ones the proxy sets). On every active route: a client `Authorization`, the
 * `X-Forwarded-*` family, `Forwarded`, `X-Real-IP`, a foreign `Host`; two session cookies, two
 * `Cookie` headers, 8 KiB and 16 KiB cookies; and, over raw sockets, CR/LF, obs-fold, NUL and
 * smuggling attempts. Pass: the upstream only ever sees the proxy's Bearer (the session's), its own
 * `Host` and the proxy's `X-Forwarded-For`; no 5xx.
 *
 * Absolute-form targets (`GET http://host/api/... HTTP/1.1`, RFC 9112 3.2.2) on every route: the
 * answer carries the same `Cache-Control` as the origin-form request, and every `/api` answer one
 * (`no-store` unless the route declares its own, or is a cached catalogue read: `public, max-age=30`
 * with or without a session), the 404 of an unknown `/api` path included.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { CATALOGUE_CACHE_CONTROL } from '../../src/routes/games.js';
import { fakeJwt } from '../helpers/recording-upstream.js';
import { keepAliveAgent, rawRequest, rawSocket, runPool } from './helpers/client.js';
import { Figures } from './helpers/figures.js';
import { type Harness, startHarness } from './helpers/harness.js';
import { type RouteCase, sampleRequest } from './helpers/routes.js';
import { GOOD_HANDSHAKE, type Seen } from './helpers/upstream.js';

const figures = new Figures('headers', 3, 'Header abuse');
/** Routes whose successes are answered from the shared catalogue cache, with `CATALOGUE_CACHE_CONTROL`. */
const CATALOGUE_READS: ReadonlySet<string> = new Set([
  '/api/games/list',
  '/api/games/search',
  '/api/games/category/:slug',
  '/api/games/provider/:slug',
  '/api/games/top-wins',
  '/api/games/statistics-dl',
]);
const OTHER = fakeJwt({ sub: '8', role: 'second-cookie' });
const ATTACKER = fakeJwt({ sub: '666', role: 'attacker' });
const FOREIGN = ['6.6.6.6', 'evil.example', 'gopher', ATTACKER];
let h: Harness;
const agent = keepAliveAgent(8);

before(async () => {
  h = await startHarness({ CACHE_PURGE_TOKEN: 'operator-credential-for-hardening' });
});
after(async () => {
  agent.destroy();
  await h.close();
  figures.write();
});

/** Checks every upstream request made for `rid`; returns how many there were. */
function checkUpstream(rid: string, label: string, expectedBearer: string | undefined): number {
  const seen: Seen[] = h.upstream.byRid.get(rid) ?? [];
  for (const s of seen) {
    const auth = s.rawHeaders.filter((_, i) => i % 2 === 0 && s.rawHeaders[i]?.toLowerCase() === 'authorization');
    figures.check(auth.length <= 1, `${label}: ${auth.length} Authorization headers upstream`);
    const bearer = s.headers.authorization;
    if (bearer !== undefined) {
      // After the handshake (spec 4.9) the sticker API gets the handshake token, not the session's.
      const sticker = s.path.startsWith('/sticker/') && s.path !== '/sticker/auth/token';
      const expected = sticker ? `Bearer ${GOOD_HANDSHAKE.access_token}` : `Bearer ${expectedBearer}`;
      figures.check(bearer === expected, `${label}: upstream ${s.path} got Authorization ${String(bearer).slice(0, 40)}…`);
    }
    figures.check(s.headers.host === `127.0.0.1:${h.upstream.port}`, `${label}: upstream Host ${s.headers.host}`);
    const xff = s.headers['x-forwarded-for'];
    figures.check(xff === undefined || xff === '127.0.0.1', `${label}: upstream X-Forwarded-For ${xff}`);
    for (const name of ['x-forwarded-host', 'x-forwarded-proto', 'x-forwarded-port', 'x-real-ip', 'forwarded']) {
      figures.check(s.headers[name] === undefined, `${label}: upstream got ${name}`);
    }
    for (let i = 0; i < s.rawHeaders.length; i += 2) {
      const name = (s.rawHeaders[i] ?? '').toLowerCase();
      const value = s.rawHeaders[i + 1] ?? '';
      if (name === 'cookie') continue; // the incoming Cookie header is forwarded unchanged (spec 1.3)
      for (const foreign of FOREIGN) {
        figures.check(!value.includes(foreign), `${label}: upstream header ${name} carries a client value`);
      }
    }
  }
  return seen.length;
}

function abusive(rc: RouteCase): Record<string, string> {
  return {
    authorization: `Bearer ${ATTACKER}`,
    'x-forwarded-for': '6.6.6.6',
    'x-forwarded-host': 'evil.example',
    'x-forwarded-proto': 'gopher',
    'x-forwarded-port': '1',
    'x-real-ip': '6.6.6.6',
    forwarded: 'for=6.6.6.6;host=evil.example;proto=gopher',
    host: rc.stateChanging ? `127.0.0.1:${h.port}` : 'evil.example',
  };
}

test('row 3: client headers never reach the upstream; the session Bearer is the only one; no 5xx', async () => {
  await figures.run('headers', async () => {
    let n = 0;
    let stubAnswers = 0;
    const jobs: (() => Promise<void>)[] = [];
    for (const rc of h.cases) {
      const sample = sampleRequest(rc, 3);
      // A token per route: no profile answer cached by another route's request.
      const TOKEN = fakeJwt({ sub: '7', role: 'session', route: rc.label });
      const variants: { name: string; headers: Record<string, string | string[]>; bearer: string | undefined }[] = [
        { name: 'abusive headers', headers: { ...abusive(rc), cookie: h.cookie(TOKEN) }, bearer: TOKEN },
        { name: 'abusive headers, no session', headers: abusive(rc), bearer: undefined },
        { name: 'two session cookies', headers: { cookie: `${h.cookie(TOKEN)}; ${h.cookie(OTHER)}` }, bearer: TOKEN },
        { name: 'two Cookie headers', headers: { cookie: [h.cookie(TOKEN), `${h.cookie(OTHER)}; a=b`] }, bearer: TOKEN },
        { name: '8 KiB cookie', headers: { cookie: `${h.cookie(TOKEN)}; pad=${'p'.repeat(8 * 1024)}` }, bearer: TOKEN },
        { name: '16 KiB cookie', headers: { cookie: `pad=${'p'.repeat(16 * 1024)}; ${h.cookie(TOKEN)}` }, bearer: TOKEN },
        {
          name: 'encoded CR/LF in a cookie',
          headers: { cookie: `${h.cookie(TOKEN)}; x=a%0d%0aAuthorization:%20Bearer%20${ATTACKER}` },
          bearer: TOKEN,
        },
      ];
      // The same request without abusive headers: a 5xx is only the header's fault if this one succeeds.
      let baseline: Promise<number> | undefined;
      const baselineStatus = () => {
        baseline ??= rawRequest(h.base, {
          method: rc.method,
          path: sample.path,
          headers: {
            cookie: h.cookie(fakeJwt({ sub: '7', base: rc.label })),
            ...(sample.contentType ? { 'content-type': sample.contentType } : {}),
          },
          body: sample.body,
          agent,
        }).then((r) => r.status);
        return baseline;
      };
      for (const v of variants) {
        const rid = `hdr-${n++}`;
        jobs.push(async () => {
          const headers: Record<string, string | string[]> = { ...v.headers, 'x-request-id': rid };
          if (sample.contentType) headers['content-type'] = sample.contentType;
          // The server closes the connection after a 431: the oversized request gets a connection of its own.
          const own = v.name.startsWith('16 KiB');
          const res = await rawRequest(h.base, {
            method: rc.method,
            path: sample.path,
            headers,
            body: sample.body,
            agent: own ? false : agent,
          });
          figures.inputs++;
          figures.status(res.status || res.error || 'no answer');
          const label = `${rc.label} [${v.name}]`;
          figures.check(res.status > 0, `${label}: no answer (${res.error})`);
          figures.check(res.status !== 500, `${label}: 500`);
          if (res.status >= 500) {
            const clean = await baselineStatus();
            figures.check(clean === res.status, `${label}: ${res.status}, without the abusive headers ${clean}`);
            if (clean === res.status) stubAnswers++;
          }
          checkUpstream(rid, label, v.bearer);
        });
      }
    }
    await runPool(jobs, 4);

    // Raw sockets: bytes node:http would refuse to send.
    const path = '/api/auth/profile';
    const TOKEN = fakeJwt({ sub: '7', role: 'raw' });
    const cookie = h.cookie(TOKEN);
    const raws: [string, string][] = [
      [
        'bare LF injects a header',
        `GET ${path} HTTP/1.1\r\nHost: x\r\nCookie: ${cookie}\r\nX-A: a\nAuthorization: Bearer ${ATTACKER}\r\nX-Request-Id: raw-1\r\n\r\n`,
      ],
      [
        'bare CR injects a header',
        `GET ${path} HTTP/1.1\r\nHost: x\r\nCookie: ${cookie}\r\nX-A: a\rAuthorization: Bearer ${ATTACKER}\r\nX-Request-Id: raw-2\r\n\r\n`,
      ],
      [
        'obs-fold continues Authorization',
        `GET ${path} HTTP/1.1\r\nHost: x\r\nCookie: ${cookie}\r\nX-A: a\r\n Authorization: Bearer ${ATTACKER}\r\nX-Request-Id: raw-3\r\n\r\n`,
      ],
      ['NUL in a header value', `GET ${path} HTTP/1.1\r\nHost: x\r\nCookie: ${cookie}\r\nX-A: a\u0000b\r\nX-Request-Id: raw-4\r\n\r\n`],
      [
        'two Authorization headers',
        `GET ${path} HTTP/1.1\r\nHost: x\r\nCookie: ${cookie}\r\nAuthorization: Bearer ${ATTACKER}\r\nAuthorization: Bearer ${ATTACKER}\r\nX-Request-Id: raw-5\r\n\r\n`,
      ],
      ['two Host headers', `GET ${path} HTTP/1.1\r\nHost: x\r\nHost: evil.example\r\nCookie: ${cookie}\r\nX-Request-Id: raw-6\r\n\r\n`],
      [
        'CL and TE together (smuggling)',
        `POST /api/auth/refresh HTTP/1.1\r\nHost: x\r\nCookie: ${cookie}\r\nContent-Type: application/json\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\nX-Request-Id: raw-7\r\n\r\n0\r\n\r\nGET /api/auth/profile HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${ATTACKER}\r\n\r\n`,
      ],
      [
        'two different Content-Length',
        `POST /api/auth/refresh HTTP/1.1\r\nHost: x\r\nCookie: ${cookie}\r\nContent-Type: application/json\r\nContent-Length: 2\r\nContent-Length: 40\r\nX-Request-Id: raw-8\r\n\r\n{}`,
      ],
      [
        'CR/LF in the request target',
        `GET ${path}\r\nAuthorization: Bearer ${ATTACKER} HTTP/1.1\r\nHost: x\r\nCookie: ${cookie}\r\nX-Request-Id: raw-9\r\n\r\n`,
      ],
      [
        'header name with a space',
        `GET ${path} HTTP/1.1\r\nHost: x\r\nCookie: ${cookie}\r\nAuthorization : Bearer ${ATTACKER}\r\nX-Request-Id: raw-10\r\n\r\n`,
      ],
      [
        '32 KiB of headers',
        `GET ${path} HTTP/1.1\r\nHost: x\r\nCookie: ${cookie}\r\nX-Pad: ${'q'.repeat(32 * 1024)}\r\nX-Request-Id: raw-11\r\n\r\n`,
      ],
    ];
    for (const [name, bytes] of raws) {
      h.proxy.app.deps.profileCache.clear();
      const before = h.upstream.seen.length;
      const res = await rawSocket(h.port, `${bytes.replace(/\r\n\r\n$/, '\r\nConnection: close\r\n\r\n')}`);
      figures.inputs++;
      figures.status(res.status || 'closed');
      figures.check(res.status === 0 || res.status < 500, `raw [${name}]: ${res.status}`);
      for (const s of h.upstream.seen.slice(before)) {
        figures.check(
          s.headers.authorization === undefined || s.headers.authorization === `Bearer ${TOKEN}`,
          `raw [${name}]: upstream got Authorization ${String(s.headers.authorization).slice(0, 40)}`,
        );
      }
    }
    figures.check(h.crashes.length === 0, `uncaught errors: ${h.crashes.join('; ')}`);
    figures.note(`${h.cases.length} route cases × 7 header variants, plus ${raws.length} raw-socket requests`);
    figures.note(
      `5xx answers: ${stubAnswers}, each also answered to the same request without the abusive headers (the test upstream's answer shape), none caused by a header`,
    );
  });
  assert.equal(figures.failureCount, 0, figures.summary());
});

test('row 3: absolute-form targets get the Cache-Control of the origin-form request; every /api answer has one', async () => {
  await figures.run('absolute-form', async () => {
    const TOKEN = fakeJwt({ sub: '7', role: 'absolute-form' });
    const origin = `http://127.0.0.1:${h.port}`;
    let compared = 0;
    let noStore = 0;
    const jobs = h.cases.map((rc) => async () => {
      const sample = sampleRequest(rc, 3);
      const headers: Record<string, string> = { cookie: h.cookie(TOKEN) };
      if (sample.contentType) headers['content-type'] = sample.contentType;
      if (rc.auth === 'operator') headers.authorization = 'Bearer operator-credential-for-hardening';
      const plain = await rawRequest(h.base, { method: rc.method, path: sample.path, headers, body: sample.body, agent });
      const absolute = await rawRequest(h.base, { method: rc.method, path: `${origin}${sample.path}`, headers, body: sample.body, agent });
      figures.inputs += 2;
      figures.status(absolute.status || absolute.error || 'no answer');
      compared++;
      const label = `${rc.method} ${origin}${sample.path}`;
      figures.check(absolute.status === plain.status, `${label}: ${absolute.status}, origin-form ${plain.status}`);
      figures.check(
        absolute.headers['cache-control'] === plain.headers['cache-control'],
        `${label}: Cache-Control ${String(absolute.headers['cache-control'])}, origin-form ${String(plain.headers['cache-control'])}`,
      );
      if (rc.url.startsWith('/api/')) {
        const declared = rc.route.cacheControl !== undefined && absolute.status < 400;
        // The cached catalogue reads answer one public entry, with or without this session (CATALOGUE_FOR_SESSIONS=shared).
        const catalogue = CATALOGUE_READS.has(rc.url) && absolute.status < 400;
        if (!declared && !catalogue) noStore++;
        figures.check(
          catalogue
            ? absolute.headers['cache-control'] === CATALOGUE_CACHE_CONTROL
            : declared
              ? absolute.headers['cache-control'] !== undefined
              : absolute.headers['cache-control'] === 'no-store',
          `${label}: Cache-Control ${String(absolute.headers['cache-control'])}`,
        );
      }
    });
    await runPool(jobs, 6);
    for (const path of ['/api/no-such-route', '/api/games/no/such/thing?x=1']) {
      for (const target of [path, `${origin}${path}`]) {
        const res = await rawRequest(h.base, { method: 'GET', path: target, agent });
        figures.inputs++;
        figures.status(res.status || res.error || 'no answer');
        figures.check(
          res.status === 404 && res.headers['cache-control'] === 'no-store',
          `GET ${target}: ${res.status} Cache-Control ${String(res.headers['cache-control'])}`,
        );
      }
    }
    figures.note(
      `absolute-form targets: ${compared} route cases compared with their origin-form request, ${noStore} /api answers with no-store, plus 4 unknown /api paths (404 no-store)`,
    );
  });
  assert.equal(figures.failureCount, 0, figures.summary());
});
