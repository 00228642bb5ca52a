/**
 * Hardening row 7, slow clients: slow-header and slow-body connections (a byte every 300 ms, so
 * never idle) are cut off by the server's timeouts while a normal client's requests keep succeeding.
 *
 * The proxy runs with short timeouts through `createServer`'s `timeouts` option (headers 1 s, whole
 * request 2 s, checked every 250 ms) so that the row takes seconds; production keeps
 * `SERVER_TIMEOUTS` (15 s / 30 s, checked every 5 s). Pass: every slow connection is closed by the
 * server within its limit + the check interval + 1 s; every normal request answers 200 within 1 s;
 * afterwards the server holds no slow connection. The proxy and the clients share this process: the
 * longest event-loop stall seen during the row (a loaded machine) is added to both allowances, since
 * neither the server's checks nor the clients can run during it.
 */
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { after, before, test } from 'node:test';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { SERVER_TIMEOUTS } from '../../src/app.js';
import { fakeJwt } from '../helpers/recording-upstream.js';
import { keepAliveAgent, rawRequest } from './helpers/client.js';
import { FULL, Figures, scaled } from './helpers/figures.js';
import { type Harness, startHarness } from './helpers/harness.js';

const figures = new Figures('slow-clients', 7, 'Slow clients');
const HEADERS_MS = 1_000;
const REQUEST_MS = 2_000;
const CHECK_MS = 250;
const SLACK_MS = 1_000;
const EACH = scaled(200, 20);
const DRIP_MS = 300;
const GIVE_UP_MS = 12_000;
/** A normal request must be served within this while the slow clients hold their sockets (bounded runs share two cores with another test file). */
const NORMAL_LIMIT_MS = FULL ? 1_000 : 3_000;
let h: Harness;
const agent = keepAliveAgent(2);

before(async () => {
  h = await startHarness(
    {},
    {},
    {
      timeouts: { headersTimeoutMs: HEADERS_MS, requestTimeoutMs: REQUEST_MS, checkIntervalMs: CHECK_MS, connectionTimeoutMs: 30_000 },
    },
  );
});
after(async () => {
  agent.destroy();
  await h.close();
  figures.write();
});

interface Slow {
  kind: 'headers' | 'body';
  /** Milliseconds from the connection to the server closing it (or giving up). */
  cutAfterMs: Promise<number>;
  /** The status the server wrote before closing (408 expected), 0 when none. */
  status: () => number;
}

function slowConnection(port: number, kind: 'headers' | 'body', token: string): Slow {
  const socket: Socket = connect(port, '127.0.0.1');
  // the server's limits run from its accept; on a loaded machine the connect lags the call
  let started = performance.now();
  let answer = '';
  let timer: NodeJS.Timeout | undefined;
  const cutAfterMs = new Promise<number>((resolve) => {
    const giveUp = setTimeout(() => {
      socket.destroy();
      resolve(Number.POSITIVE_INFINITY);
    }, GIVE_UP_MS);
    socket.on('data', (c: Buffer) => {
      answer += c.toString('latin1');
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(giveUp);
      if (timer) clearInterval(timer);
      resolve(performance.now() - started);
    });
  });
  socket.on('connect', () => {
    started = performance.now();
    if (kind === 'headers') {
      socket.write(`GET /api/auth/profile HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: ${h.cookie(token)}\r\n`);
      let i = 0;
      timer = setInterval(() => socket.write(`X-Slow-${i++}: y\r\n`), DRIP_MS);
    } else {
      socket.write(
        'POST /api/auth/login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"login":"',
      );
      timer = setInterval(() => socket.write('a'), DRIP_MS);
    }
  });
  return {
    kind,
    cutAfterMs,
    status: () => {
      const match = /^HTTP\/1\.1 (\d{3})/.exec(answer);
      return match ? Number(match[1]) : 0;
    },
  };
}

test(`row 7: ${EACH} slow-header and ${EACH} slow-body connections are cut off; a normal client keeps being served`, async () => {
  await figures.run('slow', async () => {
    figures.check(
      SERVER_TIMEOUTS.headersTimeoutMs === 15_000 && SERVER_TIMEOUTS.requestTimeoutMs === 30_000,
      'production timeouts are 15 s / 30 s',
    );
    figures.check(SERVER_TIMEOUTS.checkIntervalMs <= 5_000, 'production checks the limits at least every 5 s');
    const token = fakeJwt({ sub: '7', role: 'normal-client' });
    // warm up the routes used below, then watch the event loop
    await rawRequest(h.base, { method: 'GET', path: '/api/version', agent });
    await rawRequest(h.base, { method: 'GET', path: '/api/auth/profile', headers: { cookie: h.cookie(token) }, agent });
    const loop = monitorEventLoopDelay({ resolution: 10 });
    loop.enable();
    const slow: Slow[] = [];
    for (let i = 0; i < EACH; i++) {
      slow.push(slowConnection(h.port, 'headers', fakeJwt({ sub: '7', slow: i })));
      slow.push(slowConnection(h.port, 'body', token));
    }
    figures.inputs += slow.length;

    // The normal client: a request every 50 ms until every slow connection is gone.
    let normal = 0;
    let normalFailed = 0;
    let slowest = 0;
    let done = false;
    const normalClient = (async () => {
      while (!done) {
        const path = normal % 2 === 0 ? '/api/version' : '/api/auth/profile';
        const res = await rawRequest(h.base, { method: 'GET', path, headers: { cookie: h.cookie(token) }, agent, timeoutMs: 5_000 });
        normal++;
        figures.status(res.status ? `normal ${res.status}` : `normal ${res.error}`);
        slowest = Math.max(slowest, res.ms);
        if (res.status !== 200 || res.ms > NORMAL_LIMIT_MS + loop.max / 1e6) {
          normalFailed++;
          figures.fail(`normal request ${normal} (${path}): ${res.status || res.error} in ${Math.round(res.ms)} ms`);
        }
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    const cuts = await Promise.all(slow.map((s) => s.cutAfterMs));
    done = true;
    await normalClient;
    figures.inputs += normal;

    loop.disable();
    const stallMs = Math.round(loop.max / 1e6);
    const limits = { headers: HEADERS_MS + CHECK_MS + SLACK_MS + stallMs, body: REQUEST_MS + CHECK_MS + SLACK_MS + stallMs };
    const worst = { headers: 0, body: 0 };
    slow.forEach((s, i) => {
      const ms = cuts[i] as number;
      worst[s.kind] = Math.max(worst[s.kind], ms);
      figures.status(s.status() || (Number.isFinite(ms) ? 'closed' : 'not cut'));
      figures.check(Number.isFinite(ms), `slow-${s.kind} connection ${i}: not cut after ${GIVE_UP_MS} ms`);
      figures.check(ms <= limits[s.kind], `slow-${s.kind} connection ${i}: cut after ${Math.round(ms)} ms (limit ${limits[s.kind]} ms)`);
    });
    figures.check(normal > 0 && normalFailed === 0, `${normalFailed} of ${normal} normal requests failed`);
    figures.check(h.crashes.length === 0, `uncaught errors: ${h.crashes.slice(0, 3).join('; ')}`);
    const memory = process.memoryUsage();
    figures.memory = `rss ${Math.round(memory.rss / 1048576)} MiB`;
    figures.note(
      `slow-header cut after ≤ ${Math.round(worst.headers)} ms (limit ${HEADERS_MS} + check ${CHECK_MS}); slow-body cut after ≤ ${Math.round(worst.body)} ms (limit ${REQUEST_MS} + check ${CHECK_MS}); ${normal} normal requests, slowest ${Math.round(slowest)} ms; longest event-loop stall ${stallMs} ms`,
    );
  });
  assert.equal(figures.failureCount, 0, figures.summary());
});
