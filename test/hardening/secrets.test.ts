/**
 * Hardening row 9, secrets (docs/behaviour.md "Session cookie": the JWT never appears in a response body
 * or a log line; "Upstream requests": an error body never carries a credential). One canary JWT is
 * used for the whole row: the upstream issues it at login, registration, social login and refresh
 * (also inside `user.token`, a field of AuthUser), every route is called with it as the session, and
 * the upstream echoes it back everywhere it can — in the body (fields, the `Authorization` and
 * `Cookie` it received), in error reasons of every status, in response headers, in an HTML receipt.
 * The log is captured at `trace` level.
 *
 * Pass: the canary occurs 0 times in the log, in response bodies (error details included), and in
 * response headers other than the session's own `Set-Cookie`.
 */
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { type IncomingMessage, request as httpRequest, type ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import * as zlib from 'node:zlib';
import { SignJWT } from 'jose';
import { rawAnswer, startRawUpstream } from '../helpers/raw-upstream.js';
import { startProxy } from '../helpers/recording-upstream.js';
import { text as readText } from 'node:stream/consumers';
import { after, before, test } from 'node:test';
import { redactingStream } from '../../src/session/redact.js';
import { keepAliveAgent, type RawAnswer, rawRequest, runPool } from './helpers/client.js';
import { Figures } from './helpers/figures.js';
import { canaryJwt, type Harness, startHarness } from './helpers/harness.js';
import { sampleRequest } from './helpers/routes.js';
import { GOOD_HANDSHAKE, GOOD_PROFILE, type Seen } from './helpers/upstream.js';

const figures = new Figures('secrets', 9, 'Secrets (canary JWT)');
const CANARY = canaryJwt('secrets');
let h: Harness;
const agent = keepAliveAgent(8);
const occurrences = { logs: 0, bodies: 0, headers: 0 };

before(async () => {
  h = await startHarness({ LOG_LEVEL: 'trace', CACHE_PURGE_TOKEN: 'operator-credential-for-hardening' });
});
after(async () => {
  agent.destroy();
  await h.close();
  figures.write();
});

function count(text: string): number {
  return text.split(CANARY).length - 1;
}

/** Counts the canary in an answer; the session `Set-Cookie` is the one place it may be. */
function inspect(label: string, res: RawAnswer): void {
  figures.inputs++;
  figures.status(res.status || res.error || 'no answer');
  const inBody = count(res.body.toString('latin1'));
  occurrences.bodies += inBody;
  figures.check(inBody === 0, `${label}: the canary is in the body (${res.status}) ${res.body.toString('utf8').slice(0, 160)}`);
  const cookieName = h.proxy.app.deps.config.sessionCookieName;
  for (let i = 0; i < res.rawHeaders.length; i += 2) {
    const name = (res.rawHeaders[i] ?? '').toLowerCase();
    const value = res.rawHeaders[i + 1] ?? '';
    if (name === 'set-cookie' && value.startsWith(`${cookieName}=`)) continue;
    const n = count(value);
    occurrences.headers += n;
    figures.check(n === 0, `${label}: the canary is in the response header ${name}`);
  }
}

/** An upstream that answers `status` and echoes the credential wherever it can. */
function echo(status: number) {
  return (req: IncomingMessage, res: ServerResponse, seen: Seen) => {
    const issued = { access_token: CANARY, expires_in: 3600, token_type: 'bearer' };
    const base = seen.path.endsWith('/auth/user-profile')
      ? GOOD_PROFILE
      : seen.path === '/sticker/auth/token'
        ? GOOD_HANDSHAKE
        : /\/auth\/login$|\/register|\/bff\/social\/|\/refresh-token$/.test(seen.path)
          ? issued
          : { ok: true, data: [] };
    const body =
      status < 300
        ? {
            ...base,
            user: { ...GOOD_PROFILE.user, token: CANARY },
            userInfo: GOOD_PROFILE.userInfo,
            echo: { authorization: req.headers.authorization ?? null, cookie: req.headers.cookie ?? null },
            note: `issued ${CANARY}`,
          }
        : {
            reason: status === 401 ? 'invalid_token' : `bad token ${CANARY}`,
            message: `token ${CANARY} rejected; you sent ${req.headers.authorization ?? ''}`,
            detail: { token: CANARY },
          };
    const text = JSON.stringify(body);
    res.writeHead(status, {
      'content-type': `application/json; charset=utf-8; token=${CANARY}`,
      'content-length': Buffer.byteLength(text),
      'x-debug-token': CANARY,
      'x-upstream-authorization': String(req.headers.authorization ?? ''),
      'set-cookie': `upstream_session=${CANARY}; Path=/`,
      'www-authenticate': `Bearer error="invalid_token", token="${CANARY}"`,
    });
    res.end(text);
  };
}

test('row 9: one canary JWT, issued and echoed by the upstream, appears in no log line, body or header', async () => {
  await figures.run('secrets', async () => {
    const cookie = h.cookie(CANARY);
    // 1. The flows that issue the token: login, registration, social login, refresh.
    h.upstream.fault('', echo(200));
    const issuing: [string, string, unknown][] = [
      ['POST', '/api/auth/login', { login: 'demo@example.com', password: 'Demo#2026' }],
      ['POST', '/api/auth/register', { email: 'a@b.c', password: 'Pw#12345', country: 'BR', nationalities: '["BR"]', optIn: true }],
      ['POST', '/api/auth/social/google', { token: 'provider-token' }],
    ];
    for (const [method, path, body] of issuing) {
      const res = await rawRequest(h.base, {
        method,
        path,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
        agent,
      });
      inspect(`${path} issuing the canary`, res);
      const setCookie = [res.headers['set-cookie'] ?? []].flat().join('\n');
      figures.check(setCookie.includes(CANARY), `${path}: the session cookie was not set with the issued token (${res.status})`);
    }
    const refreshed = await rawRequest(h.base, { method: 'POST', path: '/api/auth/refresh', headers: { cookie }, agent });
    inspect('/api/auth/refresh issuing the canary', refreshed);

    // 2. Every route, with the canary as the session, against an upstream echoing it at every status.
    for (const status of [200, 400, 401, 403, 409, 422, 429, 500, 503]) {
      h.upstream.heal();
      h.upstream.fault('', echo(status));
      const jobs = h.cases.map((rc) => async () => {
        const sample = sampleRequest(rc, 9);
        const headers: Record<string, string> = { cookie };
        if (sample.contentType) headers['content-type'] = sample.contentType;
        if (rc.auth === 'operator') headers.authorization = 'Bearer operator-credential-for-hardening';
        inspect(
          `${rc.label} (upstream ${status})`,
          await rawRequest(h.base, { method: rc.method, path: sample.path, headers, body: sample.body, agent }),
        );
      });
      await runPool(jobs, 6);
    }

    // 3. Streamed answers: an HTML receipt and the raw passthrough that echo the session.
    h.upstream.heal();
    h.upstream.fault('', (req, res) => {
      const html = `<html><body>receipt for ${req.headers.authorization} ${CANARY}</body></html>`;
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-length': Buffer.byteLength(html) });
      res.end(html);
    });
    for (const [method, path, body] of [
      ['POST', '/api/wallet/receipt', JSON.stringify({ transactionId: 'tx123' })],
      ['GET', '/api/core-sportbook/events/1', undefined],
    ] as const) {
      const headers: Record<string, string> = { cookie };
      if (body) headers['content-type'] = 'application/json';
      inspect(`${path} (streamed echo)`, await rawRequest(h.base, { method, path, headers, body, agent }));
    }
    h.upstream.heal();

    // 4. Logout with the canary, then the log.
    inspect('/api/auth/logout', await rawRequest(h.base, { method: 'POST', path: '/api/auth/logout', headers: { cookie }, agent }));
    const logged = h.proxy.logs.lines.reduce((n, line) => n + count(line), 0);
    occurrences.logs = logged;
    figures.check(
      logged === 0,
      `the canary is in ${logged} log line(s): ${h.proxy.logs.lines.find((l) => l.includes(CANARY))?.slice(0, 300)}`,
    );
    figures.check(h.proxy.logs.lines.length > 0, 'the log was captured');
    figures.check(h.crashes.length === 0, `uncaught errors: ${h.crashes.slice(0, 3).join('; ')}`);
    figures.canaryOccurrences = occurrences.logs + occurrences.bodies + occurrences.headers;
    figures.note(
      `canary in logs ${occurrences.logs}, bodies ${occurrences.bodies}, headers ${occurrences.headers}; ${h.proxy.logs.lines.length} log lines at trace level; ${h.cases.length} route cases × 9 upstream statuses`,
    );
  });
  assert.equal(figures.failureCount, 0, figures.summary());
});

test('row 9: a streamed body is redacted whatever its chunking', async () => {
  await figures.run('stream redaction', async () => {
    const body = `a${CANARY}b${CANARY}${CANARY}c e${CANARY.slice(0, 20)}`;
    const expected = body.replaceAll(CANARY, '[redacted]');
    let cuts = 0;
    for (let at = 1; at < body.length; at += 7) {
      for (const size of [1, 5, 64]) {
        const chunks = [body.slice(0, at), ...(body.slice(at).match(new RegExp(`[^]{1,${size}}`, 'g')) ?? [])];
        const out = await readText(Readable.from(chunks.map((c) => Buffer.from(c))).pipe(redactingStream(CANARY)));
        cuts++;
        figures.check(out === expected, `split at ${at} in chunks of ${size}: ${out.slice(0, 80)}`);
      }
    }
    figures.inputs += cuts;
    figures.note(`stream redaction checked over ${cuts} chunkings`);
  });
  assert.equal(figures.failureCount, 0, figures.summary());
});

/** An answer as the browser reads it over a real socket, asking for every coding. */
function browserGet(base: string, path: string, cookie: string): Promise<{ status: number; headers: string; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(new URL(path, base), { headers: { cookie, 'accept-encoding': 'gzip, deflate, br' }, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('close', () => resolve({ status: res.statusCode ?? 0, headers: res.rawHeaders.join('\n'), body: Buffer.concat(chunks) }));
    });
    req.setTimeout(10_000, () => req.destroy(new Error(`${path} timed out`)));
    req.on('error', reject);
    req.end();
  });
}

/** Every decoding of `body` the browser could apply: as it is, gzip, deflate, raw deflate, br. */
function decodings(body: Buffer): string[] {
  const out = [body.toString('latin1')];
  for (const decode of [zlib.gunzipSync, zlib.inflateSync, zlib.inflateRawSync, zlib.brotliDecompressSync]) {
    try {
      out.push(decode(body).toString('latin1'));
    } catch {
      // not this coding
    }
  }
  return out;
}

test('row 9: the session cookie as the browser sent it (valid, expired, forged, malformed) never goes upstream in Cookie and never comes back', async () => {
  await figures.run('refused tokens', async () => {
    const pair = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const now = Math.floor(Date.now() / 1000);
    const sign = (key: typeof pair.privateKey, exp: number) =>
      new SignJWT({ sub: '4242' })
        .setProtectedHeader({ alg: 'RS256' })
        .setIssuedAt(now - 7200)
        .setExpirationTime(exp)
        .sign(key);
    const tokens: [string, string][] = [
      ['valid', await sign(pair.privateKey, now + 3600)],
      ['expired (genuine signature)', await sign(pair.privateKey, now - 3600)],
      ['forged (another key)', await sign(generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey, now + 3600)],
      ['malformed', 'not-a-jwt-but-a-long-session-cookie-value-0123456789'],
    ];
    const up = await startRawUpstream();
    const proxy = await startProxy(up.url, {
      JWT_PUBLIC_KEY: pair.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
      UPSTREAM_CIRCUIT_FAILURES: '0',
    });
    try {
      // The BFF echoes what it received (its Cookie and Authorization headers, the target) in a header and
      // in a gzip body, and, for the streamed passthrough, in chunks of 7 bytes that cut the token anywhere.
      up.on('/core-sportbook/', (socket, req) => {
        const echo = JSON.stringify({
          target: req.target,
          cookie: req.headers.cookie ?? null,
          authorization: req.headers.authorization ?? null,
        });
        if (req.path.includes('/chunks/')) {
          const pieces = echo.match(/[^]{1,7}/g) ?? [];
          socket.write(
            rawAnswer(
              200,
              [
                ['Content-Type', 'application/json'],
                ['Transfer-Encoding', 'chunked'],
              ],
              pieces.map((p) => `${Buffer.byteLength(p).toString(16)}\r\n${p}\r\n`).join('') + '0\r\n\r\n',
            ),
          );
          return;
        }
        socket.write(
          rawAnswer(
            200,
            [
              ['Content-Type', 'application/json'],
              ['Content-Encoding', 'gzip'],
              ['X-Echo', encodeURIComponent(echo)],
            ],
            zlib.gzipSync(echo),
          ),
        );
      });
      for (const [label, token] of tokens) {
        for (const spelling of [token, encodeURIComponent(token).replaceAll('-', '%2D')]) {
          for (const path of [`/api/core-sportbook/echo?t=${token}`, `/api/core-sportbook/chunks/?t=${token}`]) {
            const cookie = `theme=dark; access_token=${spelling}; _ga=GA1.2.3.4`;
            const res = await browserGet(proxy.url, path, cookie);
            figures.inputs++;
            figures.status(res.status);
            figures.check(res.status === 200, `${label} ${path}: ${res.status}`);
            const seen = up.seen.at(-1);
            figures.check(
              seen?.headers.cookie === 'theme=dark; _ga=GA1.2.3.4',
              `${label}: the BFF got Cookie ${String(seen?.headers.cookie).slice(0, 60)}`,
            );
            const bearer = seen?.headers.authorization;
            figures.check(
              label === 'valid' ? bearer === `Bearer ${token}` : bearer === undefined,
              `${label}: the BFF got Authorization ${String(bearer).slice(0, 20)}`,
            );
            for (const text of [...decodings(res.body), res.headers, decodeURIComponent(res.headers)]) {
              const found = [token, spelling].filter((value) => text.includes(value)).length;
              occurrences.bodies += found;
              figures.check(
                found === 0,
                `${label} (${spelling === token ? 'as is' : 'percent-encoded'}) ${path.split(/[/?]/)[3]}: the cookie value reached the browser`,
              );
            }
            figures.check(
              decodings(res.body).some((text) => text.includes('[redacted]')),
              `${label}: the echo was redacted, not lost`,
            );
          }
        }
      }
      figures.note(
        `refused tokens: ${tokens.length} kinds × 2 spellings × buffered gzip and streamed 7-byte chunks, with JWT_PUBLIC_KEY; the BFF's Cookie never held the session cookie`,
      );
    } finally {
      await proxy.close();
      await up.close();
    }
  });
  assert.equal(figures.failureCount, 0, figures.summary());
});
