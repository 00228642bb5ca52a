/**
 * Hardening row 11, graceful shutdown (src/server.ts): the process as `npm start` runs it
 * (`node --import tsx src/server.ts`, `NODE_ENV=production`) in front of a slow loopback BFF (every
 * profile read answers after 1 s). With 100 requests in flight it gets SIGTERM.
 *
 * Pass: every in-flight request completes with 200; new connections are refused within 1 s of the
 * signal (`SHUTDOWN_DELAY_MS` 0); the process exits with code 0 within its grace period
 * (`SHUTDOWN_TIMEOUT_MS`, set to `UPSTREAM_TIMEOUT_MS` + 5 s here).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type ProxyProcess, startProxyProcess, waitFor } from '../helpers/proxy-process.js';
import { fakeJwt } from '../helpers/recording-upstream.js';
import { type RawAnswer, rawRequest } from './helpers/client.js';
import { Figures, scaled } from './helpers/figures.js';
import { type FaultUpstream, good, startFaultUpstream } from './helpers/upstream.js';

const figures = new Figures('shutdown', 11, 'Graceful shutdown');
const IN_FLIGHT = scaled(100, 100);
const UPSTREAM_DELAY_MS = 1_000;
const UPSTREAM_TIMEOUT_MS = 4_000;
const GRACE_MS = UPSTREAM_TIMEOUT_MS + 5_000;
let upstream: FaultUpstream;
let child: ProxyProcess | undefined;

before(async () => {
  upstream = await startFaultUpstream();
  upstream.fault('/auth/user-profile', (req, res, seen) => setTimeout(() => good(req, res, seen), UPSTREAM_DELAY_MS));
});
after(async () => {
  await child?.kill();
  await upstream.close();
  figures.write();
});

test(`row 11: SIGTERM with ${IN_FLIGHT} requests in flight: all complete, new connections refused, exit 0 within the grace period`, async () => {
  await figures.run('shutdown', async () => {
    const proc = startProxyProcess({
      NODE_ENV: 'production',
      PORT: '0',
      BFF_BASE_URL: upstream.url,
      STICKER_API_URL: `${upstream.url}/sticker`,
      UPSTREAM_TIMEOUT_MS: String(UPSTREAM_TIMEOUT_MS),
      // All the in-flight requests must reach the upstream at once: above the endpoint's default share.
      UPSTREAM_ENDPOINT_MAX_IN_FLIGHT: String(IN_FLIGHT),
      // A fresh process on a loaded machine can pass the event-loop delay threshold while it takes the
      // 100 requests, and shed some (503 overloaded) before they reach the upstream: this row is about
      // the shutdown, shedding has rows of its own.
      LOAD_SHED_EVENT_LOOP_DELAY_MS: '0',
      SHUTDOWN_DELAY_MS: '0',
      SHUTDOWN_TIMEOUT_MS: String(GRACE_MS),
    });
    child = proc;
    const { exited } = proc;
    const address = await proc.address;

    const cookieName = '__Host-access_token';
    const inFlight: Promise<RawAnswer>[] = [];
    for (let i = 0; i < IN_FLIGHT; i++) {
      inFlight.push(
        rawRequest(address, {
          method: 'GET',
          path: '/api/auth/profile',
          headers: { cookie: `${cookieName}=${fakeJwt({ sub: '7', n: i })}` },
          timeoutMs: GRACE_MS + 5_000,
        }),
      );
    }
    const allInFlight = await waitFor(() => upstream.seen.filter((s) => s.path === '/auth/user-profile').length >= IN_FLIGHT, 15_000);
    figures.check(allInFlight, `only ${upstream.seen.length} of ${IN_FLIGHT} requests reached the upstream before the signal`);

    const signalled = Date.now();
    proc.child.kill('SIGTERM');

    // New connections: refused once the listener is closed (a connection accepted in between may get 503).
    let refusedAfter = Number.POSITIVE_INFINITY;
    let servedAfterSignal = 0;
    for (let i = 0; i < 100 && !Number.isFinite(refusedAfter); i++) {
      const probe = await rawRequest(address, { method: 'GET', path: '/healthz', timeoutMs: 1_000 });
      figures.inputs++;
      if (probe.error === 'ECONNREFUSED') refusedAfter = Date.now() - signalled;
      else if (probe.status === 200) servedAfterSignal++;
      else figures.status(`probe ${probe.status || probe.error}`);
      if (!Number.isFinite(refusedAfter)) await new Promise((r) => setTimeout(r, 10));
    }
    figures.status(Number.isFinite(refusedAfter) ? 'new connection refused' : 'new connection accepted');
    figures.check(refusedAfter <= 1_000, `new connections refused after ${refusedAfter} ms`);
    figures.check(servedAfterSignal <= 1, `${servedAfterSignal} new requests were served after the signal`);

    const answers = await Promise.all(inFlight);
    figures.inputs += answers.length;
    for (const a of answers) figures.status(a.status || a.error || 'no answer');
    const completed = answers.filter((a) => a.status === 200).length;
    figures.check(completed === IN_FLIGHT, `${completed} of ${IN_FLIGHT} in-flight requests completed with 200`);

    const exit = await Promise.race([exited, new Promise<undefined>((r) => setTimeout(r, GRACE_MS + 5_000))]);
    figures.check(exit !== undefined, 'the process did not exit');
    if (exit) {
      figures.check(exit.code === 0, `exit code ${exit.code}`);
      figures.check(exit.at - signalled <= GRACE_MS, `exited ${exit.at - signalled} ms after the signal (grace ${GRACE_MS} ms)`);
      figures.note(
        `${completed}/${IN_FLIGHT} in-flight requests completed; new connections refused ${refusedAfter} ms after SIGTERM; exit code ${exit.code} after ${exit.at - signalled} ms (grace ${GRACE_MS} ms)`,
      );
    }
    figures.faults = 1;
  });
  assert.equal(figures.failureCount, 0, figures.summary());
});
