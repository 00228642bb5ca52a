/**
 * Hardening row 17, the findings of the outside attack (history/2026-12-01-hardening-rounds.md "Outside attack"), replayed
 * against the proxy with its default limits in front of a BFF that records which calls started, which
 * bodies arrived whole and which were cut:
 *
 * 1. forged-cookie floods: random 40-letter session cookies on a session route, then well-formed
 *    made-up tokens rotated on every request from one address (docs/behaviour.md "Which routes need a
 *    session", "Rate limits and client address");
 * 2. client faults: a 10,000-deep JSON array in a forwarded field (recovery, registration); session
 *    cookies with an encoded CR/LF, NUL or U+2028, on a session route and on login; clients closing
 *    mid-body; unterminated multipart uploads; clients closing mid-upload;
 * 3. tokens in every field of the forced-logout beacon, and in `#access_token=` URLs;
 * 4. `#fragment`s on the raw sportsbook passthrough; a JWT written with `\u` escapes in a JSON answer.
 *
 * The general limits are the defaults (600 a minute per session), the forged-cookie flood's too; the
 * rotating-token flood runs on a proxy of its own (its address ceiling is spent for a minute after),
 * with the default ceiling of 6,000 in the full run and a scaled one in the bounded run.
 *
 * Pass: forged cookies answer 401 `invalid_token` with no BFF call; the BFF sees at most
 * `RATE_LIMIT_API_PER_ADDRESS_PER_MIN` calls from the rotating address, the rest 429 `rate_limited`;
 * every client fault answers 4xx (a closed client: nothing to read) and is never logged as an
 * "upstream failure" nor counted in `upstream_errors_total`; a cut upload's BFF call is aborted; no
 * token in any log line; no `#` upstream; no JWT in the decoded answer.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, test } from 'node:test';
import { fakeJwt, send, startProxy, type TestProxy } from '../helpers/recording-upstream.js';
import { keepAliveAgent, rawRequest, runPool } from './helpers/client.js';
import { FULL, Figures, scaled } from './helpers/figures.js';

const figures = new Figures('attack-findings', 17, 'Outside attack findings');
const FLOOD = scaled(650, 40);
/** The address ceiling: the default (6,000) in the full run, a scaled one in the bounded run. */
const CEILING = FULL ? 6_000 : scaled(6_000, 60);
const ROTATING = CEILING + scaled(650, 40);
const FAULT_ROUNDS = scaled(20, 3);
const agent = keepAliveAgent(8);

/** One call as the BFF saw it. */
interface Seen {
  path: string;
  url: string;
  authorization: string | undefined;
  /** Whether its body arrived whole (false: cut while it was arriving). */
  complete: boolean | undefined;
}

let bff: Server;
let bffUrl = '';
const seen: Seen[] = [];
let proxy: TestProxy;
/** A proxy of its own for the rotating-token flood, whose address ceiling it exhausts. */
let rotatingProxy: TestProxy;
const crashes: string[] = [];
const onCrash = (error: unknown) => crashes.push(String(error));

before(async () => {
  process.on('uncaughtException', onCrash);
  process.on('unhandledRejection', onCrash);
  bff = createServer((req, res) => {
    const url = req.url ?? '';
    const call: Seen = { path: url.split('?')[0] ?? '', url, authorization: req.headers.authorization, complete: undefined };
    seen.push(call);
    req.on('data', () => undefined);
    req.on('close', () => {
      call.complete = req.complete;
    });
    req.on('end', () => {
      // Every call answers 200 (login: a second factor is needed), so that upstream_errors_total, which also
      // counts the BFF's 4xx answers, moves only for upstream failures.
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        call.path === '/core-sportbook/escaped' ? ESCAPED_BODY : call.path === '/auth/login' ? '{"type":"two_factor_code"}' : '{"ok":true}',
      );
    });
  });
  await new Promise<void>((resolve) => bff.listen(0, '127.0.0.1', resolve));
  bffUrl = `http://127.0.0.1:${(bff.address() as AddressInfo).port}`;
  // The default limits of docs/behaviour.md "Rate limits and client address", with METRICS_PORT so that upstream_errors_total can be read.
  proxy = await startProxy(bffUrl, { RATE_LIMIT_API_PER_MIN: '600', METRICS_PORT: '0', UPSTREAM_TIMEOUT_MS: '2000' }, { random: () => 0 });
  rotatingProxy = await startProxy(bffUrl, { RATE_LIMIT_API_PER_MIN: '600', RATE_LIMIT_API_PER_ADDRESS_PER_MIN: String(CEILING) });
});
after(async () => {
  agent.destroy();
  await proxy.close();
  await rotatingProxy.close();
  bff.closeAllConnections();
  await new Promise((resolve) => bff.close(resolve));
  process.off('uncaughtException', onCrash);
  process.off('unhandledRejection', onCrash);
  figures.write();
});

const ESCAPE_TOKEN = fakeJwt({ sub: '7', row: 'escaped' });
const ESCAPED_BODY = `{"token":"${[...ESCAPE_TOKEN].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('')}"}`;

async function upstreamErrors(): Promise<number> {
  const text = await (proxy.app.metrics as NonNullable<TestProxy['app']['metrics']>).registry.metrics();
  return text
    .split('\n')
    .filter((l) => l.startsWith('front_proxy_upstream_errors_total{'))
    .reduce((sum, l) => sum + Number(l.split(' ').pop()), 0);
}
const upstreamFailureLines = () => proxy.logs.lines.filter((l) => l.includes('"upstream failure"')).length;
const letters = (n: number) => Array.from(randomBytes(n), (b) => String.fromCharCode(97 + (b % 26))).join('');

/** Writes a request on a raw socket: the head and `body`, then ends or closes it after `closeAfterMs`. */
function rawUpload(head: string, body: Buffer, then: 'end' | 'destroy', closeAfterMs = 100): Promise<number> {
  const url = new URL(proxy.url);
  return new Promise((resolve) => {
    const socket = connect(Number(url.port), url.hostname);
    const chunks: Buffer[] = [];
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(Buffer.concat(chunks).toString('latin1'))?.[1] ?? 0));
    };
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', () => undefined);
    socket.on('close', finish);
    socket.write(head);
    socket.write(body, () => {
      if (then === 'end') socket.end();
      else setTimeout(() => socket.destroy(), closeAfterMs);
    });
    setTimeout(() => {
      socket.destroy();
      finish();
    }, 10_000).unref();
  });
}

test(`row 17: ${FLOOD} forged cookies, ${ROTATING} rotating tokens, ${FAULT_ROUNDS} rounds of client faults, tokens in the beacon, fragments`, async () => {
  const host = new URL(proxy.url).host;

  await figures.run('forged-cookie flood', async () => {
    const before = seen.length;
    const answers = await runPool(
      Array.from(
        { length: FLOOD },
        () => () =>
          rawRequest(proxy.url, {
            method: 'GET',
            path: '/api/user/last-casino-games',
            headers: { cookie: `access_token=${letters(40)}` },
            agent,
          }),
      ),
      8,
    );
    for (const a of answers) {
      figures.inputs++;
      figures.status(a.status);
      figures.check(
        a.status === 401 && a.body.toString() === '{"reason":"invalid_token"}',
        `forged cookie: ${a.status} ${a.body.toString().slice(0, 80)}`,
      );
    }
    const calls = seen.length - before;
    figures.upstreamCallsForRejected += calls;
    figures.check(calls === 0, `${calls} forged cookies reached the BFF`);
    figures.note(
      `forged cookies: ${FLOOD} random 40-letter values on /api/user/last-casino-games, ${calls} BFF calls, all 401 invalid_token`,
    );
  });

  await figures.run('rotating tokens from one address', async () => {
    const before = seen.length;
    const started = performance.now();
    const answers = await runPool(
      Array.from(
        { length: ROTATING },
        (_, i) => () =>
          rawRequest(rotatingProxy.url, {
            method: 'GET',
            path: '/api/user/last-casino-games',
            headers: { cookie: `access_token=${fakeJwt({ n: i })}` },
            agent,
          }),
      ),
      8,
    );
    let refused = 0;
    for (const a of answers) {
      figures.inputs++;
      figures.status(a.status);
      if (a.status === 429) {
        refused++;
        figures.check(Number(a.headers['retry-after']) >= 1, '429 without Retry-After');
      } else figures.check(a.status === 200, `rotating token: ${a.status}`);
    }
    const calls = seen.length - before;
    figures.upstreamCallsForRejected += Math.max(0, calls - CEILING);
    figures.check(calls <= CEILING, `${calls} BFF calls over a ceiling of ${CEILING}`);
    figures.check(refused === ROTATING - CEILING, `${refused} refused, expected ${ROTATING - CEILING}`);
    figures.note(
      `rotating tokens: ${ROTATING} well-formed made-up tokens from one address in ${Math.round(performance.now() - started)} ms, ${calls} BFF calls (ceiling ${CEILING}), ${refused} × 429`,
    );
  });

  const errorsBefore = await upstreamErrors();
  const failuresBefore = upstreamFailureLines();

  await figures.run('client faults', async () => {
    const deep = `${'['.repeat(10_000)}${']'.repeat(10_000)}`;
    const boundary = '----row17';
    const filePart = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n`;
    const uploadHead = (length: number) =>
      `POST /api/user/store-document?endpoint=selfie HTTP/1.1\r\nHost: ${host}\r\nCookie: access_token=${fakeJwt()}\r\n` +
      `Content-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${length}\r\n\r\n`;
    const controlCookies = [
      'abc%0d%0aX-Injected:%20yes',
      `${fakeJwt()}%0d%0aX-Injected:%20yes`,
      `${fakeJwt()}%00`,
      `${fakeJwt()}%E2%80%A8`,
    ];
    for (let round = 0; round < FAULT_ROUNDS; round++) {
      const before = seen.length;
      for (const [path, body] of [
        // 1,000 levels on recovery: its 16 KiB body limit would refuse 10,000 by size first
        ['/api/auth/recovery', `{"step":"options","login":"a@example.com","x":${'['.repeat(1_000)}${']'.repeat(1_000)}}`],
        ['/api/auth/register', `{"email":"a@example.com","password":"Secret#2026","user_prudential_limit_active":${deep}}`],
      ] as const) {
        const res = await send(proxy.url, 'POST', path, { body, headers: { 'content-type': 'application/json' } });
        figures.inputs++;
        figures.faults++;
        figures.status(res.status);
        figures.check(res.status === 400, `deep JSON on ${path}: ${res.status}`);
      }
      const deepCalls = seen.length - before;
      figures.upstreamCallsForRejected += deepCalls;
      figures.check(deepCalls === 0, `${deepCalls} deep bodies reached the BFF`);

      for (const value of controlCookies) {
        const before = seen.length;
        const onSession = await rawRequest(proxy.url, {
          method: 'GET',
          path: '/api/user/last-casino-games',
          headers: { cookie: `access_token=${value}` },
          agent,
        });
        const onLogin = await send(proxy.url, 'POST', '/api/auth/login', {
          json: { login: 'a@example.com', password: 'x' },
          headers: { cookie: `access_token=${value}` },
        });
        figures.inputs += 2;
        figures.faults += 2;
        figures.status(onSession.status);
        figures.status(`login ${onLogin.status}`);
        figures.check(onSession.status === 401, `control-character cookie on a session route: ${onSession.status}`);
        figures.check(onLogin.status === 200, `control-character cookie on login: ${onLogin.status}`);
        const calls = seen.slice(before);
        figures.upstreamCallsForRejected += calls.filter((c) => c.path !== '/auth/login').length;
        figures.check(
          calls.length === 1 && calls[0]?.path === '/auth/login' && calls[0].authorization === undefined,
          'login: forwarded without a Bearer',
        );
      }

      const jsonHead = `POST /api/auth/recovery HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nContent-Length: 4000\r\n\r\n`;
      figures.status(`closed mid-body ${await rawUpload(jsonHead, Buffer.from('{"step":"options","login":"a@'), 'destroy')}`);
      const cut = Buffer.concat([Buffer.from(filePart), Buffer.alloc(128 * 1024, 0x61)]);
      const cutStatus = await rawUpload(uploadHead(cut.length), cut, 'end');
      figures.status(`unterminated multipart ${cutStatus}`);
      figures.check(cutStatus === 400, `unterminated multipart: ${cutStatus}`);
      const part = Buffer.concat([Buffer.from(filePart), Buffer.alloc(256 * 1024, 0x62)]);
      figures.status(`closed mid-upload ${await rawUpload(uploadHead(4 * 1024 * 1024), part, 'destroy', 200)}`);
      figures.inputs += 3;
      figures.faults += 3;
    }
    await sleep(300);
    const uploads = seen.filter((c) => c.path === '/documents/selfie');
    figures.check(
      uploads.every((c) => c.complete === false),
      `${uploads.filter((c) => c.complete !== false).length} cut uploads reached the BFF whole`,
    );
    const errors = (await upstreamErrors()) - errorsBefore;
    const lines = upstreamFailureLines() - failuresBefore;
    figures.check(errors === 0, `${errors} client faults counted in upstream_errors_total`);
    figures.check(lines === 0, `${lines} client faults logged as upstream failures`);
    figures.note(
      `client faults: ${FAULT_ROUNDS} rounds of 2 deep bodies, 4 control-character cookies × 2 routes, a close mid-body, an unterminated upload, a close mid-upload; ` +
        `${uploads.length} uploads started upstream, all cut; upstream_errors_total +${errors}, "upstream failure" lines +${lines}`,
    );
  });

  await figures.run('tokens in the beacon', async () => {
    const canary = fakeJwt({ sub: '7', row: 'beacon-canary' });
    const values = [
      canary,
      `token ${canary}`,
      `x${canary}`,
      `https://app.example.com/cb#access_token=${canary}`,
      canary.replaceAll('.', '%2E'),
    ];
    const beacon = {
      ref: 'EP0003-EM0003',
      endpointCode: 'EP0003',
      errorCode: 'EM0003',
      status: 401,
      reason: 'r',
      url: '/u',
      initiator: 'i',
      pathname: '/p',
      timestamp: 1,
      hadCookie: true,
      userAgentShort: 'ua',
    };
    for (const value of values) {
      for (const field of ['ref', 'endpointCode', 'errorCode', 'reason', 'url', 'initiator', 'pathname', 'userAgentShort']) {
        const res = await send(proxy.url, 'POST', '/api/logs/auth-logout', { json: { ...beacon, [field]: value } });
        figures.inputs++;
        figures.status(`beacon ${res.status}`);
        figures.check(res.status === 204 || res.status === 400, `beacon ${field}: ${res.status}`);
      }
    }
    const payload = canary.split('.')[1] ?? canary;
    const found = proxy.logs.lines.filter((l) => l.includes(payload)).length;
    figures.canaryOccurrences += found;
    figures.check(found === 0, `the canary in ${found} log lines`);
    figures.note(
      `beacon: ${values.length} disguises × 8 text fields, ${proxy.logs.entries.filter((e) => e.msg === 'forced-logout').length} entries logged, the token in ${found} lines`,
    );
  });

  await figures.run('fragments and escaped tokens', async () => {
    const before = seen.length;
    for (let round = 0; round < FAULT_ROUNDS; round++) {
      for (const target of [
        '/api/core-sportbook/a?b=1#y',
        '/api/core-sportbook/a#access_token=x',
        `/api/core-sportbook/events/${round}?live=1#frag`,
      ]) {
        const res = await rawRequest(proxy.url, { method: 'GET', path: target, agent });
        figures.inputs++;
        figures.status(res.status);
      }
      const escaped = await send(proxy.url, 'GET', '/api/core-sportbook/escaped', { token: ESCAPE_TOKEN });
      figures.inputs++;
      figures.status(escaped.status);
      const decoded = JSON.stringify(JSON.parse(escaped.text));
      figures.check(!decoded.includes(ESCAPE_TOKEN), 'the \\u-escaped JWT reached the answer');
    }
    const withFragment = seen.slice(before).filter((c) => c.url.includes('#'));
    figures.check(withFragment.length === 0, `${withFragment.length} upstream targets with a #fragment`);
    figures.note(
      `fragments: ${FAULT_ROUNDS * 3} passthrough targets with a #fragment, ${withFragment.length} upstream targets with one; ${FAULT_ROUNDS} answers with a \\u-escaped JWT, redacted`,
    );
  });

  figures.check(crashes.length === 0, `crashes: ${crashes.join(' | ')}`);
  assert.equal(figures.failureCount, 0, figures.summary());
});
