/**
 * docs/behaviour.md "Operations", SIGTERM, and "Error envelope", `shutting_down`: the process as `npm start`
 * runs it, over real loopback sockets, in front of a recording BFF.
 *
 * - `/readyz` answers 503 `shutting_down` at once while other requests are still served for
 *   `SHUTDOWN_DELAY_MS`; then the listener closes, a request arriving on a kept-alive connection
 *   opened before is served with `Connection: close`, idle kept-alive connections are closed after
 *   the idle grace, the in-flight slow request finishes, and the exit code is 0.
 * - a kept-alive connection left idle across the listener's close carries one more request within the
 *   idle grace: served (200, `Connection: close`), the BFF called once, while a connection opened after
 *   the close is refused; the process still exits long before `SHUTDOWN_TIMEOUT_MS`.
 * - a connection that reaches the process after its listener closed (handed over late) gets the 503
 *   envelope with `Connection: close` (never Fastify's own body), nothing sent upstream.
 * - a request still open after `SHUTDOWN_TIMEOUT_MS` is cut and the exit code is 1.
 * - with `WORKERS` = 2 the primary replaces a dead worker after 100 ms, then 200 ms, passes SIGTERM on
 *   and exits 0 once the workers have.
 * - behind a real nginx (keep-alive upstream connections, no `http_503` in `proxy_next_upstream`), a
 *   rolling restart of two instances under a stream of GET and POST requests: no client-visible error,
 *   and no request handled by a stopping instance and then sent again to the other.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { type AddressInfo, createServer as createNetServer } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { IDLE_GRACE_MS } from '../src/pipeline/drain.js';
import { HAVE_NGINX, startNginx } from './helpers/fleet-processes.js';
import { fakeJwt, type RecordingUpstream, startProxy, startRecordingUpstream } from './helpers/recording-upstream.js';
import {
  freePort,
  oneShot,
  type ProxyProcess,
  RawConnection,
  type RawHttpAnswer,
  startProxyProcess,
  waitFor,
} from './helpers/proxy-process.js';

const PROFILE = {
  user: { id: 7, email: 'drain@example.com', name: 'Drain', currency: 'BRL', country: 'BR' },
  userInfo: { two_factor_enabled: false },
};
const COOKIE = 'access_token';
const SLOW_TOKEN = fakeJwt({ sub: '7', slow: true });

let upstream: RecordingUpstream;
/** Milliseconds the BFF takes to answer a profile read with {@link SLOW_TOKEN}. */
let slowMs = 0;
/** Milliseconds the BFF takes for any other profile read. */
let fastMs = 0;
const processes: ProxyProcess[] = [];

before(async () => {
  upstream = await startRecordingUpstream();
  upstream.on('GET', '/auth/user-profile', (rec, res) => {
    const delay = rec.headers.authorization === `Bearer ${SLOW_TOKEN}` ? slowMs : fastMs;
    setTimeout(() => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(PROFILE));
    }, delay);
  });
});
after(async () => {
  for (const proc of processes) await proc.kill();
  await upstream.close();
});

/** Starts a proxy in front of the recording BFF (NODE_ENV=test, cookie `access_token`). */
function proxy(env: Record<string, string>): ProxyProcess {
  const proc = startProxyProcess({
    NODE_ENV: 'test',
    PORT: '0',
    BFF_BASE_URL: upstream.url,
    STICKER_API_URL: `${upstream.url}/sticker`,
    UPSTREAM_TIMEOUT_MS: '15000',
    // This file sends many requests from one address; docs/behaviour.md "Rate limits and client address": 0 turns a limit off.
    RATE_LIMIT_API_PER_MIN: '0',
    // Fresh instances on a loaded machine can pass the event-loop delay threshold while they take a
    // restart's traffic, and shed it (503 overloaded): this file is about draining, shedding has tests of its own.
    LOAD_SHED_EVENT_LOOP_DELAY_MS: '0',
    ...env,
  });
  processes.push(proc);
  return proc;
}

const isAnswer = (a: RawHttpAnswer | { error: string } | undefined): a is RawHttpAnswer => a !== undefined && 'status' in a;

/**
 * Probes `base` with one `/healthz` request at a time (`pauseMs` apart) until a connect is refused, and
 * resolves with the time of the refusal (`Date.now()`) and the error of a probe reset by the close, if any. Every probe the process accepted must be served:
 * 200, never a 503, a connection accepted just as the listener closed included. A probe the kernel had
 * queued when the listener closed never reaches the process: the close resets it without an answer. That
 * is allowed for the last probe before the refusal only (the listener is closed once it was reset), so a
 * connection reset while the listener still accepts fails, as does a listener still open `limitMs` after `since`.
 */
async function probeUntilRefused(
  base: string,
  since: number,
  limitMs: number,
  pauseMs: number,
): Promise<{ at: number; reset: string | undefined }> {
  let reset: string | undefined;
  for (;;) {
    const probe = await oneShot(base, '/healthz');
    if (!isAnswer(probe) && probe.error === 'ECONNREFUSED') return { at: Date.now(), reset };
    assert.equal(
      reset,
      undefined,
      `a probe was reset by the listener's close (${reset}), yet the next connect was not refused: ${JSON.stringify(probe)}`,
    );
    if (isAnswer(probe)) assert.equal(probe.status, 200, `served normally until the listener closes: ${JSON.stringify(probe)}`);
    else if (probe.error === 'ECONNRESET' || probe.error === 'closed without an answer') reset = probe.error;
    else assert.fail(`probe failed: ${probe.error}`);
    assert.ok(Date.now() - since < limitMs, 'the listener closed');
    if (reset === undefined && pauseMs > 0) await new Promise((r) => setTimeout(r, pauseMs));
  }
}
const profileReads = (token: string) =>
  upstream.requests.filter((r) => r.path === '/auth/user-profile' && r.headers.authorization === `Bearer ${token}`);

describe('SIGTERM: drain', () => {
  test('readiness 503 at once, requests served during SHUTDOWN_DELAY_MS, then the listener closes, a kept-alive request is served with Connection: close, idle connections closed after the idle grace, the slow request finishes, exit 0', async (t) => {
    const DELAY_MS = 1_500;
    slowMs = 3_500;
    fastMs = 0;
    const proc = proxy({ SHUTDOWN_DELAY_MS: String(DELAY_MS), SHUTDOWN_TIMEOUT_MS: '8000' });
    const base = await proc.address;

    const readyBefore = await oneShot(base, '/readyz');
    assert.ok(isAnswer(readyBefore) && readyBefore.status === 200, `ready before the signal: ${JSON.stringify(readyBefore)}`);

    // An idle kept-alive connection, and one with a slow request in flight.
    const idle = await RawConnection.open(base);
    idle.send('/healthz');
    const idleFirst = await idle.next();
    assert.equal(idleFirst?.status, 200);
    assert.notEqual(idleFirst?.headers.connection, 'close', 'kept alive before the signal');
    const slow = await RawConnection.open(base);
    slow.send('/api/auth/profile', { Cookie: `${COOKIE}=${SLOW_TOKEN}` });
    assert.ok(await waitFor(() => profileReads(SLOW_TOKEN).length === 1, 5_000), 'the slow request reached the BFF');

    const signalled = Date.now();
    proc.child.kill('SIGTERM');

    // Readiness turns at once.
    let notReady: RawHttpAnswer | undefined;
    while (!notReady && Date.now() - signalled < 1_000) {
      const answer = await oneShot(base, '/readyz');
      if (isAnswer(answer) && answer.status === 503) notReady = answer;
      else await new Promise((r) => setTimeout(r, 20));
    }
    assert.ok(notReady, '/readyz answered 503 within 1 s of SIGTERM');
    const readyMs = notReady.at - signalled;
    assert.deepEqual(JSON.parse(notReady.body), { ok: false, error: 'shutting_down', detail: 'The server is shutting down' });

    // Still served during the delay (a load balancer still sends traffic): a new connection, and a
    // kept-alive one whose answer now closes it.
    const token = fakeJwt({ sub: '7', during: 'delay' });
    const during = await oneShot(base, '/api/auth/profile', { Cookie: `${COOKIE}=${token}` });
    assert.ok(isAnswer(during), JSON.stringify(during));
    assert.equal(during.status, 200);
    assert.deepEqual(JSON.parse(during.body).user, PROFILE.user);
    assert.ok(during.at - signalled < DELAY_MS, `served ${during.at - signalled} ms after SIGTERM, within the delay`);
    const reused = await RawConnection.open(base);
    reused.send('/healthz');
    const reusedAnswer = await reused.next();
    assert.equal(reusedAnswer?.status, 200);
    assert.equal(reusedAnswer?.headers.connection, 'close', 'while draining, the last answer of a connection closes it');
    await reused.closed;

    // The listener closes after the delay. Every connection the listener accepted is served, a connection
    // accepted just as it closed (whose request is read after the delay) included: never a 503.
    const { at: refused } = await probeUntilRefused(base, signalled, DELAY_MS + 2_000, 25);
    const closedMs = refused - signalled;
    assert.ok(closedMs >= DELAY_MS - 50, `listener closed ${closedMs} ms after SIGTERM, not before SHUTDOWN_DELAY_MS (${DELAY_MS})`);

    // The idle kept-alive connection is closed once the idle grace after the listener's close is over
    // (KEEP_ALIVE_TIMEOUT_MS is 65 s).
    await Promise.race([idle.closed, new Promise((r) => setTimeout(r, IDLE_GRACE_MS + 1_000))]);
    assert.ok(idle.closedAt !== undefined, 'the idle kept-alive connection was closed');
    const idleClosedMs = idle.closedAt - signalled;
    assert.ok(
      idleClosedMs >= DELAY_MS + IDLE_GRACE_MS - 50,
      `the idle connection stayed open during the delay and the idle grace (closed after ${idleClosedMs} ms; ${DELAY_MS} + ${IDLE_GRACE_MS})`,
    );

    // A request arriving on the kept-alive connection of the in-flight slow request.
    assert.equal(slow.closedAt, undefined, 'the connection with a request in flight stays open');
    slow.send('/api/version');
    const slowAnswer = await slow.next(10_000);
    const late = await slow.next(5_000);
    assert.equal(slowAnswer?.status, 200, 'the in-flight slow request finished');
    assert.deepEqual(JSON.parse(slowAnswer?.body ?? '{}').user, PROFILE.user);
    assert.notEqual(slowAnswer?.headers.connection, 'close', 'a request follows on this connection: the answer behind it closes it');
    assert.ok(late, 'the request arriving after the listener closed was answered');
    assert.ok(
      late.at - signalled >= DELAY_MS + IDLE_GRACE_MS - 50,
      `it was sent after the listener closed (answered after ${late.at - signalled} ms)`,
    );
    assert.equal(late.status, 200, `a request on a connection opened before the listener closed is served: ${late.body}`);
    assert.equal(late.headers.connection, 'close');
    assert.ok(late.headers['x-request-id'], 'the request context ran');
    assert.equal(typeof JSON.parse(late.body).buildId, 'string');
    await slow.closed;

    const exit = await proc.exited;
    assert.equal(exit.code, 0, proc.output().slice(-1_000));
    t.diagnostic(
      `readyz 503 after ${readyMs} ms; listener closed after ${closedMs} ms (SHUTDOWN_DELAY_MS ${DELAY_MS}); idle connection closed after ${idleClosedMs} ms; ` +
        `slow request answered after ${(slowAnswer?.at ?? 0) - signalled} ms; exit ${exit.code} after ${exit.at - signalled} ms`,
    );
  });

  test("a kept-alive connection idle across the listener's close: its next request is served (200, Connection: close), the BFF called once; exit 0 long before SHUTDOWN_TIMEOUT_MS", async (t) => {
    const TIMEOUT_MS = 8_000;
    fastMs = 0;
    const proc = proxy({ SHUTDOWN_DELAY_MS: '0', SHUTDOWN_TIMEOUT_MS: String(TIMEOUT_MS) });
    const base = await proc.address;

    // Two kept-alive connections, each with one answered request: one is reused after the listener
    // closed, the other stays idle.
    const reused = await RawConnection.open(base);
    const first = fakeJwt({ sub: '7', idle: 'first' });
    reused.send('/api/auth/profile', { Cookie: `${COOKIE}=${first}` });
    const firstAnswer = await reused.next();
    assert.equal(firstAnswer?.status, 200);
    assert.notEqual(firstAnswer?.headers.connection, 'close', 'kept alive before the signal');
    const idle = await RawConnection.open(base);
    idle.send('/healthz');
    assert.equal((await idle.next())?.status, 200);

    const signalled = Date.now();
    proc.child.kill('SIGTERM');
    // SHUTDOWN_DELAY_MS is 0: the listener closes at once; every connection it accepted until then is served.
    const { at: refused, reset } = await probeUntilRefused(base, signalled, 2_000, 0);
    // A connection opened after the close is refused, or answered 503 shutting_down with Connection: close:
    // never served, never reset.
    const afterClose = await oneShot(base, '/healthz');
    if (isAnswer(afterClose)) {
      assert.equal(afterClose.status, 503, `a connection after the close: ${JSON.stringify(afterClose)}`);
      assert.equal(afterClose.headers.connection, 'close');
      assert.equal(JSON.parse(afterClose.body).error, 'shutting_down');
    } else {
      assert.equal(afterClose.error, 'ECONNREFUSED', 'a connection after the close is refused');
    }

    // The kept-alive connection was idle when the listener closed; a balancer reuses it now.
    assert.equal(reused.closedAt, undefined, 'the idle kept-alive connection is still open after the listener closed');
    const second = fakeJwt({ sub: '7', idle: 'second' });
    const sentAt = Date.now();
    reused.send('/api/auth/profile', { Cookie: `${COOKIE}=${second}` });
    assert.ok(sentAt - signalled < IDLE_GRACE_MS, `sent within the idle grace after the close (${sentAt - signalled} ms after SIGTERM)`);
    const answer = await reused.next(5_000);
    assert.ok(answer, `the request sent ${sentAt - refused} ms after the listener closed was answered`);
    assert.equal(answer.status, 200, answer.body);
    assert.deepEqual(JSON.parse(answer.body).user, PROFILE.user);
    assert.equal(answer.headers.connection, 'close', 'the answer closes the connection');
    assert.equal(profileReads(second).length, 1, 'the BFF was called once for it');
    await Promise.race([reused.closed, new Promise((r) => setTimeout(r, 2_000))]);
    assert.ok(reused.closedAt !== undefined, 'the connection closed after its answer');

    // The connection nobody reused is closed once the idle grace is over.
    await Promise.race([idle.closed, new Promise((r) => setTimeout(r, IDLE_GRACE_MS + 2_000))]);
    assert.ok(idle.closedAt !== undefined, 'the idle connection was closed');
    const idleClosedMs = idle.closedAt - signalled;
    assert.ok(
      idleClosedMs >= IDLE_GRACE_MS - 50,
      `the idle connection was closed after the idle grace (${idleClosedMs} ms; grace ${IDLE_GRACE_MS})`,
    );

    const exit = await proc.exited;
    assert.equal(exit.code, 0, proc.output().slice(-1_000));
    const exitMs = exit.at - signalled;
    assert.ok(exitMs < TIMEOUT_MS / 2, `exited ${exitMs} ms after SIGTERM, not held until SHUTDOWN_TIMEOUT_MS (${TIMEOUT_MS})`);
    t.diagnostic(
      `listener closed within ${refused - signalled} ms${reset === undefined ? '' : ` (a probe queued as it closed: ${reset})`}; request sent on the idle connection ${sentAt - signalled} ms after SIGTERM: ${answer.status}, ` +
        `Connection: ${answer.headers.connection}, BFF calls ${profileReads(second).length}; a connection after the close: ` +
        `${isAnswer(afterClose) ? afterClose.status : afterClose.error}; other idle connection closed after ${idleClosedMs} ms; exit ${exit.code} after ${exitMs} ms`,
    );
  });

  test('a connection that reaches the process after its listener closed answers 503 shutting_down with Connection: close, nothing sent upstream', async (t) => {
    const own = await startProxy(upstream.url, { SHUTDOWN_DELAY_MS: '0', SHUTDOWN_TIMEOUT_MS: '3000' });
    // Connections accepted elsewhere and handed to the proxy's server, as a cluster worker may get one
    // from its primary, here after the listener closed.
    const handOver = createNetServer((socket) => own.app.server.emit('connection', socket));
    await new Promise<void>((resolve) => handOver.listen(0, '127.0.0.1', resolve));
    const handOverBase = `http://127.0.0.1:${(handOver.address() as AddressInfo).port}`;
    try {
      // An idle kept-alive connection keeps the server open during the idle grace.
      const idle = await RawConnection.open(own.url);
      idle.send('/healthz');
      assert.equal((await idle.next())?.status, 200);
      const drained = own.app.drain();
      assert.ok(await waitFor(() => !own.app.server.listening, 2_000), 'the listener closed');
      const token = fakeJwt({ sub: '7', late: 'handed over' });
      const late = await oneShot(handOverBase, '/api/auth/profile', { Cookie: `${COOKIE}=${token}` });
      assert.ok(isAnswer(late), JSON.stringify(late));
      assert.equal(late.status, 503);
      assert.equal(late.headers.connection, 'close');
      assert.equal(late.headers['cache-control'], 'no-store');
      assert.ok(late.headers['x-request-id'], 'the request context ran');
      assert.ok(!late.body.includes('statusCode'), `never Fastify's own body: ${late.body}`);
      assert.deepEqual(JSON.parse(late.body), {
        ok: false,
        error: 'shutting_down',
        detail: 'The server is shutting down; send the request again',
      });
      assert.equal(profileReads(token).length, 0, 'nothing was sent upstream');
      assert.deepEqual(await drained, { cut: 0 });
      t.diagnostic(`late connection: ${late.status} ${JSON.parse(late.body).error}, Connection: ${late.headers.connection}`);
    } finally {
      await new Promise((resolve) => handOver.close(resolve));
    }
  });

  test('a request still open after SHUTDOWN_TIMEOUT_MS is cut and the exit code is 1', async (t) => {
    slowMs = 10_000;
    const proc = proxy({ SHUTDOWN_DELAY_MS: '0', SHUTDOWN_TIMEOUT_MS: '500' });
    const base = await proc.address;
    const before = profileReads(SLOW_TOKEN).length;
    const slow = await RawConnection.open(base);
    slow.send('/api/auth/profile', { Cookie: `${COOKIE}=${SLOW_TOKEN}` });
    assert.ok(await waitFor(() => profileReads(SLOW_TOKEN).length > before, 5_000));
    const signalled = Date.now();
    proc.child.kill('SIGTERM');
    const exit = await proc.exited;
    assert.equal(exit.code, 1);
    assert.ok(exit.at - signalled < 4_000, `exited ${exit.at - signalled} ms after SIGTERM`);
    assert.equal(await slow.next(2_000), undefined, 'the cut request got no answer');
    await slow.closed;
    assert.match(proc.output(), /SHUTDOWN_TIMEOUT_MS over: cutting the requests still open/);
    t.diagnostic(`cut after SHUTDOWN_TIMEOUT_MS 500: exit ${exit.code} after ${exit.at - signalled} ms`);
  });
});

describe('WORKERS > 1', () => {
  test('a dead worker is replaced after 100 ms, then 200 ms; SIGTERM reaches every worker and the primary exits 0 after them', async (t) => {
    const closed = await freePort();
    const proc = proxy({ WORKERS: '2', REDIS_URL: `redis://127.0.0.1:${closed}/0`, SHUTDOWN_DELAY_MS: '200' });
    const listening = () => [...proc.output().matchAll(/"pid":(\d+)[^\n]*front proxy listening on/g)].map((m) => Number(m[1]));
    assert.ok(await waitFor(() => listening().length === 2, 60_000), `two workers listen: ${proc.output().slice(-800)}`);
    const base = await proc.address;

    const [first = 0, second = 0] = listening();
    process.kill(first, 'SIGKILL');
    assert.ok(await waitFor(() => listening().length === 3, 60_000), 'a worker replaced the first');
    assert.match(proc.output(), new RegExp(`worker ${first} exited with SIGKILL after \\d+ ms; starting another in 100 ms`));
    const third = listening()[2] ?? 0;
    process.kill(third, 'SIGKILL');
    assert.ok(await waitFor(() => listening().length === 4, 60_000), 'a worker replaced the replacement');
    assert.match(proc.output(), new RegExp(`worker ${third} exited with SIGKILL after \\d+ ms; starting another in 200 ms`));
    const fourth = listening()[3] ?? 0;

    const served = await oneShot(base, '/healthz');
    assert.ok(isAnswer(served) && served.status === 200);

    proc.child.kill('SIGTERM');
    const exit = await proc.exited;
    assert.equal(exit.code, 0, proc.output().slice(-1_000));
    for (const pid of [second, fourth]) {
      assert.throws(() => process.kill(pid, 0), /ESRCH/, `worker ${pid} has exited`);
    }
    const drained = [...proc.output().matchAll(/"pid":(\d+)[^\n]*"msg":"draining/g)].map((m) => Number(m[1]));
    assert.deepEqual(drained.sort(), [second, fourth].sort(), 'both workers drained');
    t.diagnostic(`workers ${first}, ${second}, ${third}, ${fourth}; re-forks after 100 ms then 200 ms; primary exit ${exit.code}`);
  });
});

describe('behind nginx', () => {
  test(
    'a rolling restart of two instances behind nginx (keep-alive upstream) while 20 clients send GET and POST requests: no client-visible error, no request handled twice',
    { skip: HAVE_NGINX ? false : 'nginx is not installed (CI installs it: .ci/run)' },
    async (t) => {
      fastMs = 20;
      const ports = [await freePort(), await freePort()];
      const env = (port: number) => ({ PORT: String(port), SHUTDOWN_DELAY_MS: '500', SHUTDOWN_TIMEOUT_MS: '5000' });
      const instances = ports.map((port) => proxy(env(port)));
      await Promise.all(instances.map((p) => p.address));

      // A refused or reset connection: the other instance. nginx does not know an instance drains (no
      // readiness probe): it learns when a connection is refused or reset as the listener closes (a
      // connection still in its backlog, or an idle one the instance closes just as nginx sends on it);
      // a request on a kept-alive connection opened before is served, so no 503 is to be passed on
      // (no http_503). The instance handled none of the refused or reset requests, so POSTs are passed
      // on too (non_idempotent). A request cut after SHUTDOWN_TIMEOUT_MS would be sent again as well:
      // money moves carry their idempotency key.
      const nginx = await startNginx(ports, { nextUpstream: 'error timeout non_idempotent', accessLog: true });
      t.after(() => nginx.stop());
      const front = nginx.url;
      let up = false;
      for (let i = 0; i < 100 && !up; i++) {
        const probe = await oneShot(front, '/api/version');
        up = isAnswer(probe) && probe.status === 200;
        if (!up) await new Promise((r) => setTimeout(r, 50));
      }
      assert.ok(up, 'nginx answers');

      // 20 clients, each sending one request after the other until told to stop: half read a profile
      // (GET, a BFF call of 20 ms each), half search the games (POST).
      const statuses = new Map<string, number>();
      /** The token of every profile read that was answered 200: each names one client request. */
      const answeredTokens: string[] = [];
      let requests = 0;
      let stop = false;
      const client = async (id: number) => {
        for (let n = 0; !stop && n < 5_000; n++) {
          const token = fakeJwt({ sub: '7', client: id, n });
          let key: string;
          try {
            if (id % 2 === 0) {
              const res = await fetch(`${front}/api/auth/profile`, { headers: { cookie: `${COOKIE}=${token}` } });
              const body = await res.text();
              key = res.status === 200 && body.includes('drain@example.com') ? 'GET 200' : `GET ${res.status} ${body.slice(0, 80)}`;
              if (key === 'GET 200') answeredTokens.push(token);
            } else {
              const res = await fetch(`${front}/api/games/search`, {
                method: 'POST',
                headers: { 'content-type': 'application/json' },
                body: JSON.stringify({ page: (n % 5) + 1 }),
              });
              const body = await res.text();
              key = res.status === 200 ? 'POST 200' : `POST ${res.status} ${body.slice(0, 80)}`;
            }
          } catch (error) {
            key = `error ${(error as Error & { cause?: { code?: string } }).cause?.code ?? (error as Error).message}`;
          }
          requests++;
          statuses.set(key, (statuses.get(key) ?? 0) + 1);
        }
      };
      const clients = Array.from({ length: 20 }, (_, i) => client(i));
      const settle = (ms: number) => new Promise((r) => setTimeout(r, ms));

      await settle(700);
      const exits: (number | null)[] = [];
      for (const index of [0, 1]) {
        const old = instances[index] as ProxyProcess;
        const servedBefore = requests;
        old.child.kill('SIGTERM');
        const exit = await old.exited;
        exits.push(exit.code);
        const restarted = proxy(env(ports[index] as number));
        instances[index] = restarted;
        await restarted.address;
        await settle(700);
        t.diagnostic(`instance ${index + 1}: exit ${exit.code}; ${requests - servedBefore} requests answered while it restarted`);
      }
      stop = true;
      await Promise.all(clients);

      const log = readFileSync(nginx.accessLog as string, 'utf8')
        .trim()
        .split('\n');
      const retried = log.filter((line) => line.includes(', '));
      const retriedWhy = new Map<string, number>();
      for (const line of retried) {
        const first = /^(\S+) .*"[^"]*" "([^,"]*),/.exec(line);
        const key = `${first?.[1] ?? '?'} ${first?.[2]?.trim() ?? '?'}`;
        retriedWhy.set(key, (retriedWhy.get(key) ?? 0) + 1);
      }
      // Every profile read reached the BFF exactly once: none was handled by a stopping instance, then
      // cut and sent again to the other one.
      const calls = new Map<string, number>();
      for (const r of upstream.requests) {
        if (r.path === '/auth/user-profile') calls.set(r.headers.authorization ?? '', (calls.get(r.headers.authorization ?? '') ?? 0) + 1);
      }
      const twice = answeredTokens.filter((token) => (calls.get(`Bearer ${token}`) ?? 0) !== 1).length;
      const figures =
        `${requests} requests through nginx during a rolling restart of 2 instances; statuses ${JSON.stringify(Object.fromEntries(statuses))}; ` +
        `profile reads that reached the BFF other than once: ${twice} of ${answeredTokens.length}; ` +
        `nginx retried ${retried.length} on the other instance (method and first attempt's status, 502 = refused or reset: ${JSON.stringify(Object.fromEntries(retriedWhy))}); instance exit codes ${exits.join(', ')}`;
      t.diagnostic(figures);
      assert.deepEqual([...statuses.keys()].sort(), ['GET 200', 'POST 200'], figures);
      assert.ok(requests >= 200, figures);
      assert.equal(twice, 0, figures);
      assert.deepEqual(exits, [0, 0], figures);
    },
  );
});
