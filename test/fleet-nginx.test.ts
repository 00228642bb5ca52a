// docs/behaviour.md "Money moves: exactly once" across processes: three proxy processes sharing a real
// redis-server behind a real nginx (round robin, keep-alive upstream connections), one recording
// upstream as the BFF. docs/behaviour.md "Operations", SIGTERM: a rolling restart of three processes behind
// nginx with its default `proxy_next_upstream error timeout` loses no read.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { FRONT_END_PAGE, HAVE_NGINX, type ProxyProcess, proxyProcess, startNginx, type TestNginx } from './helpers/fleet-processes.js';
import { fakeJwt, type RecordingUpstream, send, startRecordingUpstream } from './helpers/recording-upstream.js';
import { HAVE_REDIS, startRedis, type TestRedis } from './helpers/redis-server.js';

const USER_ID = 7;
const DEPOSIT = '/wallet/add-credit';
const skip = !HAVE_REDIS ? 'redis-server is not installed' : !HAVE_NGINX ? 'nginx is not installed' : false;

describe('three processes behind nginx, sharing Redis', { skip }, () => {
  let redis: TestRedis;
  let upstream: RecordingUpstream;
  let nginx: TestNginx;
  const instances: ProxyProcess[] = [];
  const deposits = () => upstream.requests.filter((r) => r.method === 'POST' && r.path === DEPOSIT);

  before(async () => {
    redis = await startRedis();
    upstream = await startRecordingUpstream();
    upstream.on('GET', '/auth/user-profile', { json: { user: { id: USER_ID }, userInfo: {} } });
    for (let i = 0; i < 3; i++) {
      const instance = await proxyProcess({
        NODE_ENV: 'test',
        BFF_BASE_URL: upstream.url,
        REDIS_URL: redis.url,
        UPSTREAM_TIMEOUT_MS: '4000',
      });
      instances.push(instance);
    }
    await Promise.all(instances.map((i) => i.start()));
    nginx = await startNginx(instances.map((i) => i.port));
  });
  after(async () => {
    await nginx?.stop();
    await Promise.all(instances.map((i) => i.stop('SIGKILL')));
    await upstream?.close();
    await redis?.stop();
  });

  test('one origin through the shipped nginx configuration: /api/ reaches the proxy, every other path the front end, a 10 MiB KYC upload passes', async () => {
    // The front end: its page at / and at any route of the single-page application.
    for (const path of ['/', '/casino/golden-fortune']) {
      const page = await fetch(`${nginx.url}${path}`);
      assert.equal(page.status, 200, path);
      assert.equal(await page.text(), FRONT_END_PAGE, path);
    }
    // The proxy, under the same origin: a same-origin POST passes the CSRF check (Host keeps the port).
    const version = await send(nginx.url, 'GET', '/api/version');
    assert.equal(version.status, 200);
    assert.ok(typeof (version.json as { buildId?: unknown }).buildId === 'string');
    const origin = new URL(nginx.url).origin;
    upstream.on('POST', '/auth/logout', { json: { message: 'ok' } });
    const logout = await send(nginx.url, 'POST', '/api/auth/logout', { headers: { origin, 'sec-fetch-site': 'same-origin' } });
    assert.equal(logout.status, 200, logout.text);
    const crossSite = await send(nginx.url, 'POST', '/api/auth/logout', { headers: { origin: 'https://evil.example' } });
    assert.equal(crossSite.status, 403);
    // A KYC document of 10 MiB (the route's limit) is not refused by nginx (its default limit is 1 MiB).
    upstream.on('POST', '/documents/selfie', { json: { ok: true, stored: true } });
    const boundary = 'doctorboundary';
    const file = Buffer.alloc(10 * 1024 * 1024 - 1024, 0x41);
    const body = Buffer.concat([
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="selfie.png"\r\nContent-Type: image/png\r\n\r\n`),
      file,
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]);
    const token = fakeJwt({ sub: String(USER_ID) });
    const res = await fetch(`${nginx.url}/api/user/store-document?endpoint=selfie`, {
      method: 'POST',
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, cookie: `access_token=${token}`, origin },
      body,
    });
    const text = await res.text();
    assert.equal(res.status, 200, text);
    const stored = upstream.requests.filter((r) => r.method === 'POST' && r.path === '/documents/selfie');
    assert.equal(stored.length, 1);
    assert.ok((stored[0]?.body.length ?? 0) > file.length, `the BFF got ${stored[0]?.body.length} bytes`);
  });

  test('40 deposits, each submitted 4 times at once, with and without Idempotency-Key: 40 upstream calls', async () => {
    upstream.on('POST', DEPOSIT, (req, res) => {
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ transaction_id: `ch_${(req.json as { credit_amount?: number })?.credit_amount}`, status: 'pending' }));
      }, 50);
    });
    const token = fakeJwt({ sub: String(USER_ID), n: Math.random() });
    const before = deposits().length;
    const statuses: Record<string, number> = {};
    await Promise.all(
      Array.from({ length: 40 }, async (_, i) => {
        const body = { userId: USER_ID, creditAmount: 1_000 + i, paymentMethod: 'pix', currency: 'BRL' };
        const headers: Record<string, string> = i % 2 === 0 ? { 'idempotency-key': `fleet-${i}-${Math.random()}` } : {};
        const answers = await Promise.all(
          Array.from({ length: 4 }, () => send(nginx.url, 'POST', '/api/payments/deposit', { json: body, token, headers })),
        );
        for (const a of answers) statuses[a.status] = (statuses[a.status] ?? 0) + 1;
      }),
    );
    const calls = deposits().length - before;
    console.log(`160 submissions of 40 deposits through nginx: ${calls} upstream calls, statuses ${JSON.stringify(statuses)}`);
    assert.equal(calls, 40, `duplicates seen: ${calls - 40}`);
    assert.deepEqual(
      Object.keys(statuses).filter((s) => s !== '200' && s !== '409'),
      [],
    );
  });

  test('a process killed (SIGKILL) mid-deposit: the retry with the same key on another instance never reaches the BFF twice while the lease holds', async () => {
    upstream.on('POST', DEPOSIT, (_req, res) => {
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ transaction_id: 'ch_killed', status: 'pending' }));
      }, 1_500);
    });
    const token = fakeJwt({ sub: String(USER_ID), n: Math.random() });
    const body = { userId: USER_ID, creditAmount: 4_242, paymentMethod: 'pix', currency: 'BRL' };
    const headers = { 'idempotency-key': `killed-${Math.random()}` };
    const before = deposits().length;
    const [victim, other] = instances as [ProxyProcess, ProxyProcess];
    const first = send(victim.url, 'POST', '/api/payments/deposit', { json: body, token, headers }).then(
      (r) => r.status,
      () => 'connection lost',
    );
    const deadline = Date.now() + 5_000;
    while (deposits().length === before && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    assert.equal(deposits().length, before + 1, 'the deposit reached the BFF');
    await victim.stop('SIGKILL');
    assert.equal(await first, 'connection lost');
    // The lease is UPSTREAM_TIMEOUT_MS (4 s) + 5 s from the first attempt; each retry waits up to 3 s for
    // the first's answer before its 409, so they are sent together, well inside the lease.
    const [viaNginx, ...retries] = await Promise.all([
      send(nginx.url, 'POST', '/api/payments/deposit', { json: body, token, headers }),
      ...Array.from({ length: 3 }, () => send(other.url, 'POST', '/api/payments/deposit', { json: body, token, headers })),
    ]);
    console.log(
      `retries after SIGKILL: ${[...retries, viaNginx].map((r) => r.status).join(', ')}; BFF calls ${deposits().length - before}`,
    );
    for (const r of [...retries, viaNginx]) {
      assert.equal(r.status, 409);
      assert.equal((r.json as { error: string }).error, 'request_in_progress');
      assert.ok(Number(r.headers.get('retry-after')) >= 1);
    }
    assert.equal(deposits().length, before + 1, 'the BFF saw the deposit once');
    await victim.start();
  });
});

describe(
  'a rolling restart of three processes behind nginx (default proxy_next_upstream)',
  { skip: HAVE_NGINX ? false : 'nginx is not installed' },
  () => {
    const CLIENTS = 16;
    /** Milliseconds the BFF takes to answer a profile read: requests are in flight when an instance stops. */
    const BFF_MS = 10;
    /** Milliseconds of traffic before the first restart, between restarts and after the last one. */
    const SETTLE_MS = 1_000;
    let upstream: RecordingUpstream;
    let nginx: TestNginx | undefined;
    const instances: ProxyProcess[] = [];

    before(async () => {
      upstream = await startRecordingUpstream();
      upstream.on('GET', '/auth/user-profile', (_req, res) => {
        setTimeout(() => {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(
            JSON.stringify({
              user: { id: USER_ID, email: 'rolling@example.com', name: 'Rolling', currency: 'BRL', country: 'BR' },
              userInfo: { two_factor_enabled: false },
            }),
          );
        }, BFF_MS);
      });
      for (let i = 0; i < 3; i++) {
        // SHUTDOWN_DELAY_MS and SHUTDOWN_TIMEOUT_MS at their defaults (0 and 10 s): nginx follows no
        // readiness probe, the listener closes at SIGTERM. One client address: the API limit is off.
        instances.push(await proxyProcess({ NODE_ENV: 'test', BFF_BASE_URL: upstream.url, RATE_LIMIT_API_PER_MIN: '0' }));
      }
      await Promise.all(instances.map((i) => i.start()));
      nginx = await startNginx(
        instances.map((i) => i.port),
        { accessLog: true },
      );
    });
    after(async () => {
      await nginx?.stop();
      await Promise.all(instances.map((i) => i.stop('SIGKILL')));
      await upstream?.close();
    });

    test(
      `${CLIENTS} clients read an authenticated route while each instance is restarted in turn (SIGTERM): no client-visible error, every read reaches the BFF once`,
      { timeout: 180_000 },
      async (t) => {
        const front = (nginx as TestNginx).url;
        const statuses = new Map<string, number>();
        /** The token of every read answered 200: each names one client request. */
        const answered: string[] = [];
        let requests = 0;
        let stop = false;
        const client = async (id: number) => {
          for (let n = 0; !stop; n++) {
            const token = fakeJwt({ sub: String(USER_ID), rolling: id, n });
            let key: string;
            try {
              const res = await fetch(`${front}/api/auth/profile`, { headers: { cookie: `access_token=${token}` } });
              const body = await res.text();
              key = res.status === 200 && body.includes('rolling@example.com') ? '200' : `${res.status} ${body.slice(0, 80)}`;
              if (key === '200') answered.push(token);
            } catch (error) {
              key = `error ${(error as Error & { cause?: { code?: string } }).cause?.code ?? (error as Error).message}`;
            }
            requests++;
            statuses.set(key, (statuses.get(key) ?? 0) + 1);
          }
        };
        const settle = () => new Promise((r) => setTimeout(r, SETTLE_MS));
        const started = Date.now();
        const clients = Array.from({ length: CLIENTS }, (_, i) => client(i));
        await settle();
        const exits: (number | null)[] = [];
        for (const instance of instances) {
          const before = requests;
          const stopping = Date.now();
          exits.push(await instance.stop('SIGTERM'));
          const stoppedMs = Date.now() - stopping;
          await instance.start();
          await settle();
          t.diagnostic(
            `instance on port ${instance.port}: exit ${exits.at(-1)} ${stoppedMs} ms after SIGTERM; ${requests - before} requests answered while it restarted`,
          );
        }
        stop = true;
        await Promise.all(clients);
        const seconds = (Date.now() - started) / 1_000;

        const log = readFileSync((nginx as TestNginx).accessLog as string, 'utf8')
          .trim()
          .split('\n');
        const retried = log.filter((line) => line.includes(', ')).length;
        const calls = new Map<string, number>();
        for (const r of upstream.requests) {
          if (r.path === '/auth/user-profile')
            calls.set(r.headers.authorization ?? '', (calls.get(r.headers.authorization ?? '') ?? 0) + 1);
        }
        const notOnce = answered.filter((token) => calls.get(`Bearer ${token}`) !== 1).length;
        const errors = requests - (statuses.get('200') ?? 0);
        const figures =
          `${requests} requests in ${seconds.toFixed(1)} s through nginx (proxy_next_upstream error timeout), ${exits.length} restarts, ` +
          `client-visible errors ${errors} (${JSON.stringify(Object.fromEntries(statuses))}); nginx passed ${retried} on to another instance; ` +
          `reads that reached the BFF other than once: ${notOnce} of ${answered.length}; exit codes ${exits.join(', ')}`;
        t.diagnostic(figures);
        assert.equal(errors, 0, figures);
        assert.deepEqual(exits, [0, 0, 0], figures);
        assert.ok(requests >= 1_000, figures);
        assert.equal(notOnce, 0, figures);
      },
    );
  },
);
