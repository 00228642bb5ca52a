/**
 * The circuit breaker under concurrency over real sockets, at the default limits (docs/behaviour.md
 * "Resilience", target row "one endpoint hangs with the default limits … then recovers"):
 * `UPSTREAM_TIMEOUT_MS` 15000, 32 calls in flight, a queue of 64, 5 failures, a pause of 5000 ms. 200
 * clients loop on one endpoint (each asks again 200 ms after an answer) while it hangs; the endpoint
 * recovers 500 ms after the second trial call reached it, so that a trial is still hanging when it
 * recovers (the BFF holds the calls it received while hung, for their whole time limit).
 *
 * Checked: the circuit opens when the first calls time out; from then on at most one call reaches
 * the endpoint per pause (no queued call is sent; one trial per pause); once it recovers, its calls
 * answer 200 again within the pause + 1 s, and every client is served. About 30 s of wall time.
 */
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { after, before, test } from 'node:test';
import { Pool } from 'undici';
import { fakeJwt, type RecordingUpstream, startProxy, startRecordingUpstream, type TestProxy } from './helpers/recording-upstream.js';

const HISTORY = '/bff/users/login-history'; // EP0032, GET /api/user/login-history
const PROFILE = '/auth/user-profile';
const CLIENTS = 200;
const THINK_MS = 200;
const PAUSE_MS = 5_000;
const TIMEOUT_MS = 15_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let upstream: RecordingUpstream;
let proxy: TestProxy;
let pool: Pool;
/** Calls the hung endpoint holds (released at the end). */
const held = new Set<ServerResponse>();

before(async () => {
  upstream = await startRecordingUpstream();
  upstream.on('GET', PROFILE, { json: { user: { id: 7 }, userInfo: {} } });
  // The defaults of every guard limit; only the request limits are off (every client is one address).
  proxy = await startProxy(upstream.url);
  pool = new Pool(proxy.url, { connections: CLIENTS + 8, pipelining: 1, keepAliveTimeout: 30_000 });
});
after(async () => {
  for (const res of held) res.destroy();
  await pool.destroy();
  await proxy.close();
  await upstream.close();
});

test(
  'a hung endpoint at the default limits: ≤ 1 call per pause once open; used again within the pause + 1 s of its recovery',
  { timeout: 90_000 },
  async (t) => {
    const config = proxy.app.deps.config;
    assert.equal(config.upstreamTimeoutMs, TIMEOUT_MS, 'the default time limit');
    assert.equal(config.upstreamLimits.circuitPauseMs, PAUSE_MS, 'the default pause');

    // The endpoint: hangs until `recoveredAt`, then answers at once. Arrival times in epoch ms (the log's clock).
    const arrivals: number[] = [];
    let recoveredAt = Number.POSITIVE_INFINITY;
    let openedAt = Number.POSITIVE_INFINITY;
    upstream.on('GET', HISTORY, (_rec, res) => {
      const now = Date.now();
      arrivals.push(now);
      if (now >= recoveredAt) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"ok":true}');
        return;
      }
      held.add(res);
      res.on('close', () => held.delete(res));
      // Recover 500 ms after the second call that reached it once its circuit opened (a trial, still hanging).
      if (arrivals.filter((t) => t >= openedAt + 1_000).length === 2) recoveredAt = now + 500;
    });
    const opened = () => proxy.logs.entries.find((e) => e.endpoint === 'EP0032' && e.to === 'open');

    const tokens = Array.from({ length: 16 }, (_, i) => fakeJwt({ sub: '7', n: i }));
    /** Each answer: when its request was sent and answered (epoch ms), its status. */
    const answers: { sent: number; at: number; status: number | 'error'; error?: string }[] = [];
    const started = Date.now();
    let stopAt = started + 60_000;
    await Promise.all(
      Array.from({ length: CLIENTS }, async (_, i) => {
        await sleep((i * 5) % 1_000);
        while (Date.now() < stopAt) {
          let status: number | 'error' = 'error';
          let error: string | undefined;
          const sent = Date.now();
          try {
            const res = await pool.request({
              method: 'GET',
              path: '/api/user/login-history',
              headers: { cookie: `access_token=${tokens[i % tokens.length]}` },
            });
            const text = await res.body.text();
            status = res.statusCode;
            if (status === 503) error = /"error":"([a-z_]+)"/.exec(text)?.[1];
          } catch {
            // counted as an error
          }
          const at = Date.now();
          answers.push({ sent, at, status, ...(error === undefined ? {} : { error }) });
          if (openedAt === Number.POSITIVE_INFINITY)
            openedAt = opened() === undefined ? Number.POSITIVE_INFINITY : Date.parse(String(opened()?.time));
          // Served again: a little more, to see every client served, then stop.
          if (status === 200 && at >= recoveredAt && stopAt > at + 2_000) stopAt = at + 2_000;
          await sleep(THINK_MS);
        }
      }),
    );

    assert.ok(Number.isFinite(openedAt), 'the circuit opened');
    const openedAfter = openedAt - started;
    assert.ok(
      openedAfter >= TIMEOUT_MS && openedAfter < TIMEOUT_MS + 3_000,
      `opened ${openedAfter} ms after the hang began, when the first calls timed out`,
    );
    assert.ok(
      Number.isFinite(recoveredAt),
      `the endpoint recovered (calls after the opening at ${arrivals
        .filter((t) => t >= openedAt)
        .map((t) => t - openedAt)
        .join(', ')} ms)`,
    );

    // The first failures (4 of the 5 that open the circuit) gave their slots to queued calls while it was
    // still closed: those may reach the endpoint just after the opening was logged.
    const admittedBefore = arrivals.filter((t) => t > openedAt && t < openedAt + 1_000);
    assert.ok(admittedBefore.length <= config.upstreamLimits.circuitFailures - 1, `${admittedBefore.length} calls just after the opening`);
    // Once open and until the recovery: at most one call per pause. The times are those the calls reached
    // the endpoint, each after its way through the proxy and this process's event loop, which the 200
    // clients keep busy: 500 ms are allowed for the difference of two such ways (calls handed out of the
    // queue would come milliseconds apart).
    const whileOpen = arrivals.filter((t) => t >= openedAt + 1_000 && t < recoveredAt);
    const gaps = whileOpen.slice(1).map((t, i) => t - (whileOpen[i] as number));
    assert.ok(whileOpen.length >= 2, `the trials: ${whileOpen.length}`);
    assert.ok(
      gaps.every((gap) => gap >= PAUSE_MS - 500),
      `calls reaching it while open, ms apart: ${gaps.join(', ')}`,
    );
    assert.ok(held.size <= 32 + 3, `${held.size} calls held by the hung endpoint`);

    // Once it recovers: 200 again within the pause + 1 s, then every client is served.
    const first200 = answers.find((a) => a.status === 200 && a.at >= recoveredAt);
    assert.ok(first200, 'served again after the recovery');
    const within = first200.at - recoveredAt;
    assert.ok(within <= PAUSE_MS + 1_000, `the first 200 came ${within} ms after the recovery`);
    // Calls sent to the endpoint while it hung still hang (504 at their time limit). From a second after
    // the first 200 the circuit stays closed: requests are answered 200, or refused upstream_busy by the
    // bulkhead when a loaded machine makes 200 clients ask more than its slots and queue take in.
    const last = answers.filter((a) => a.sent >= first200.at + 1_000);
    const lastOk = last.filter((a) => a.status === 200).length;
    assert.ok(last.length >= CLIENTS && lastOk >= last.length / 2, `sent a second after: ${JSON.stringify(statusCounts(last))}`);
    assert.ok(
      last.every((a) => a.status === 200 || a.error === 'upstream_busy'),
      `sent a second after: ${JSON.stringify(statusCounts(last))}`,
    );
    // Before the recovery: a running call hangs (504 at its time limit), every other is refused 503 (busy, then circuit open).
    const before = answers.filter((a) => a.at < recoveredAt);
    assert.ok(
      before.every((a) => a.status === 503 || a.status === 504),
      JSON.stringify(statusCounts(before)),
    );
    t.diagnostic(
      `opened ${openedAfter} ms after the hang; ${admittedBefore.length} calls admitted before it arrived just after; calls reaching it while open ${gaps.join(', ')} ms apart; first 200 ${within} ms after the recovery; answers ${JSON.stringify(statusCounts(answers))}`,
    );
  },
);

function statusCounts(answers: readonly { status: number | 'error'; error?: string }[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const a of answers) {
    const key = a.error === undefined ? String(a.status) : `${a.status} ${a.error}`;
    out[key] = (out[key] ?? 0) + 1;
  }
  return out;
}
