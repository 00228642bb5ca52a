/**
 * Hardening row 15, abuse of the pre-authentication routes (docs/behaviour.md "Rate limits and client
 * address"), with the default limits: password guessing on one login, then a flood of logins,
 * recovery codes (SMS or e-mail bombing) and document validations from one address, the same with a
 * new spoofed `X-Forwarded-For` on each request (the proxy trusts no proxy here), and a beacon flood.
 *
 * Pass: the BFF sees at most 5 attempts of the guessed login and at most 20 pre-authentication requests
 * from the address per minute whatever the header says (calls beyond count as upstream calls for
 * rejected input); every refusal is 429 `rate_limited` with `Retry-After`; at most 10 beacons a minute.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type RecordingUpstream, send, startProxy, startRecordingUpstream, type TestProxy } from '../helpers/recording-upstream.js';
import { Figures, scaled } from './helpers/figures.js';

const figures = new Figures('rate-limits', 15, 'Rate limits on abuse');
const ATTEMPTS = scaled(500, 60);
const DEFAULTS = {
  RATE_LIMIT_PREAUTH_PER_MIN: '20',
  RATE_LIMIT_LOGIN_FAILURES: '5',
  RATE_LIMIT_BEACON_PER_MIN: '10',
  RATE_LIMIT_API_PER_MIN: '600',
};
let upstream: RecordingUpstream;
const proxies: TestProxy[] = [];

before(async () => {
  upstream = await startRecordingUpstream();
});
after(async () => {
  for (const p of proxies) await p.close();
  await upstream.close();
  figures.write();
});

/** Sends the requests one after the other; the upstream calls they caused and the answers not refused. */
async function attack(
  proxy: TestProxy,
  requests: { path: string; json: unknown; headers?: Record<string, string> }[],
): Promise<{ calls: number; accepted: number }> {
  const before = upstream.requests.length;
  let accepted = 0;
  for (const r of requests) {
    const res = await send(proxy.url, 'POST', r.path, { json: r.json, headers: r.headers });
    figures.inputs++;
    figures.status(res.status);
    if (res.status !== 429) accepted++;
    if (res.status === 429) {
      figures.check((res.json as { error?: string }).error === 'rate_limited', `${r.path}: 429 without rate_limited`);
      figures.check(Number(res.headers.get('retry-after')) >= 1, `${r.path}: 429 without Retry-After`);
    }
  }
  return { calls: upstream.requests.length - before, accepted };
}

test(`row 15: ${ATTEMPTS} guesses, floods of logins, recovery codes and validations, spoofed addresses, beacons: the BFF sees only what the limits allow`, async () => {
  const fresh = async () => {
    upstream.reset();
    upstream.on('POST', '/auth/login', { status: 401, json: { error: 'invalid_credentials' } });
    const proxy = await startProxy(upstream.url, DEFAULTS);
    proxies.push(proxy);
    return proxy;
  };
  await figures.run('password guessing', async () => {
    const proxy = await fresh();
    const { calls } = await attack(
      proxy,
      Array.from({ length: ATTEMPTS }, (_, i) => ({
        path: '/api/auth/login',
        json: { login: 'victim@example.com', password: `guess-${i}` },
      })),
    );
    figures.upstreamCallsForRejected += Math.max(0, calls - 5);
    figures.check(calls <= 5, `${calls} guesses reached the BFF`);
    figures.note(`password guessing: ${ATTEMPTS} attempts, ${calls} reached the BFF`);
  });
  const floods: [string, (i: number) => { path: string; json: unknown }][] = [
    ['logins', (i) => ({ path: '/api/auth/login', json: { login: `user${i}@example.com`, password: 'x' } })],
    ['recovery codes', (i) => ({ path: '/api/auth/recovery', json: { step: i % 2 ? 'by-sms' : 'by-email', login: 'victim@example.com' } })],
    ['document validations', (i) => ({ path: '/api/auth/validate-document', json: { number: String(10_000_000_000 + i) } })],
  ];
  for (const [name, make] of floods) {
    for (const spoofed of [false, true]) {
      await figures.run(`${name}${spoofed ? ', spoofed addresses' : ''}`, async () => {
        const proxy = await fresh();
        const { calls } = await attack(
          proxy,
          Array.from({ length: ATTEMPTS }, (_, i) => ({
            ...make(i),
            ...(spoofed ? { headers: { 'x-forwarded-for': `203.0.113.${i % 250}` } } : {}),
          })),
        );
        figures.upstreamCallsForRejected += Math.max(0, calls - 20);
        figures.check(calls <= 20, `${name}: ${calls} reached the BFF`);
        figures.note(`${name}${spoofed ? ' with spoofed X-Forwarded-For' : ''}: ${ATTEMPTS} requests, ${calls} reached the BFF`);
      });
    }
  }
  await figures.run('beacon flood', async () => {
    const proxy = await fresh();
    const beacon = {
      ref: 'EP0003-EM0003',
      endpointCode: 'EP0003',
      errorCode: 'EM0003',
      status: 401,
      reason: 'x',
      url: '/api/auth/profile',
      initiator: 'row',
      pathname: '/',
      timestamp: 1,
      hadCookie: true,
      userAgentShort: 'row',
    };
    const lines = () => proxy.logs.entries.filter((e) => e.event === 'forced-logout').length;
    const { accepted } = await attack(
      proxy,
      Array.from({ length: ATTEMPTS }, () => ({ path: '/api/logs/auth-logout', json: beacon })),
    );
    figures.check(accepted <= 10, `${accepted} beacons accepted`);
    figures.check(lines() <= accepted, `${lines()} beacon log lines for ${accepted} beacons`);
    figures.note(`beacon flood: ${ATTEMPTS} beacons, ${accepted} accepted, ${lines()} log lines (sampled at 50%)`);
  });
  assert.equal(figures.failureCount, 0, figures.summary());
});
