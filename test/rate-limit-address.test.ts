/**
 * docs/behaviour.md "Rate limits and client address", the per-address ceiling
 * (`RATE_LIMIT_API_PER_ADDRESS_PER_MIN`): an IPv6 client is counted by its /64 (it picks its address
 * freely inside it); with `JWT_*` verification, a request whose token verified is not counted, while
 * anonymous requests and tokens that passed unverified still are. Over real sockets, behind a trusted
 * proxy (`X-Forwarded-For`) so that the test chooses the client address.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { SignJWT } from 'jose';
import { addressKey } from '../src/state/address-key.js';
import { fakeJwt, type RecordingUpstream, send, startProxy, startRecordingUpstream, type TestProxy } from './helpers/recording-upstream.js';

const SESSION_ROUTE = '/api/user/last-casino-games';
const SECRET = 'a-shared-hmac-secret-of-the-bff-0123456789';
const OFF = {
  RATE_LIMIT_PREAUTH_PER_MIN: '0',
  RATE_LIMIT_LOGIN_FAILURES: '0',
  RATE_LIMIT_BEACON_PER_MIN: '0',
  RATE_LIMIT_API_PER_MIN: '0',
};

describe('addressKey', () => {
  const cases: [string, string][] = [
    ['203.0.113.7', '203.0.113.7'],
    ['::ffff:203.0.113.7', '203.0.113.7'],
    ['::ffff:cb00:7107', '203.0.113.7'],
    ['2001:db8:1:2::1', '2001:db8:1:2::/64'],
    ['2001:db8:1:2:ffff:ffff:ffff:ffff', '2001:db8:1:2::/64'],
    ['2001:0db8:0001:0002:0000:0000:0000:0001', '2001:db8:1:2::/64'],
    ['2001:DB8:1:2::abcd', '2001:db8:1:2::/64'],
    ['2001:db8:1:3::1', '2001:db8:1:3::/64'],
    ['fe80::1%eth0', 'fe80::/64'],
    ['::1', '::/64'],
    ['not an address', 'not an address'],
    ['2001:db8::zz', '2001:db8::zz'],
  ];
  for (const [ip, expected] of cases) test(`${ip} → ${expected}`, () => assert.equal(addressKey(ip), expected));
});

async function hs256(claims: Record<string, unknown>, secret = SECRET): Promise<string> {
  return new SignJWT({ sub: '7', ...claims })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuedAt()
    .setExpirationTime('1h')
    .sign(new TextEncoder().encode(secret));
}

function assertRefused(res: Awaited<ReturnType<typeof send>>, limit = 'the ceiling') {
  assert.equal(res.status, 429, limit);
  assert.equal((res.json as { error: string }).error, 'rate_limited');
  assert.ok(Number(res.headers.get('retry-after')) >= 1);
}

describe('the per-address ceiling', () => {
  let upstream: RecordingUpstream;
  const proxies: TestProxy[] = [];
  const start = async (env: Record<string, string>) => {
    const proxy = await startProxy(upstream.url, { ...OFF, TRUSTED_PROXIES: '127.0.0.1', ...env });
    proxies.push(proxy);
    return proxy;
  };
  const from = (address: string) => ({ 'x-forwarded-for': address });
  before(async () => {
    upstream = await startRecordingUpstream();
  });
  after(async () => {
    for (const p of proxies) await p.close();
    await upstream.close();
  });

  test('IPv6: every address of one /64 counts in one ceiling; another /64 has its own; an IPv4-mapped address is its IPv4 one', async () => {
    const proxy = await start({ RATE_LIMIT_API_PER_ADDRESS_PER_MIN: '5' });
    const statuses: number[] = [];
    for (let i = 1; i <= 8; i++) {
      const res = await send(proxy.url, 'GET', SESSION_ROUTE, {
        token: fakeJwt({ n: i }),
        headers: from(`2001:db8:1:2:${i.toString(16)}::${i}`),
      });
      statuses.push(res.status);
    }
    assert.deepEqual(statuses, [200, 200, 200, 200, 200, 429, 429, 429]);
    assertRefused(await send(proxy.url, 'GET', '/api/games/list', { headers: from('2001:db8:1:2:ffff:ffff:ffff:fffe') }));
    assert.equal(
      (await send(proxy.url, 'GET', SESSION_ROUTE, { token: fakeJwt(), headers: from('2001:db8:1:3::1') })).status,
      200,
      'the next /64',
    );
    for (let i = 0; i < 5; i++)
      assert.equal((await send(proxy.url, 'GET', '/api/games/list', { headers: from('::ffff:198.51.100.4') })).status, 200);
    assertRefused(await send(proxy.url, 'GET', '/api/games/list', { headers: from('198.51.100.4') }));
  });

  test('with JWT_SECRET: verified tokens are not counted, anonymous requests and refused tokens are; each session keeps its own limit', async () => {
    const proxy = await start({ JWT_SECRET: SECRET, RATE_LIMIT_API_PER_ADDRESS_PER_MIN: '5', RATE_LIMIT_API_PER_MIN: '7' });
    const nat = from('203.0.113.9');
    // Thousands of players behind one carrier NAT: 40 verified sessions, 3 requests each.
    for (let n = 0; n < 40; n++) {
      const token = await hs256({ n });
      for (let i = 0; i < 3; i++)
        assert.equal((await send(proxy.url, 'GET', SESSION_ROUTE, { token, headers: nat })).status, 200, `session ${n}`);
    }
    // The ceiling still holds anonymous requests (and tokens that are no session) from that address.
    for (let i = 0; i < 3; i++) assert.equal((await send(proxy.url, 'GET', '/api/games/list', { headers: nat })).status, 200);
    const forged = await hs256({ n: 'forged' }, 'another-secret-of-at-least-32-bytes!!');
    assert.equal((await send(proxy.url, 'GET', '/api/games/list', { token: forged, headers: nat })).status, 200, 'no session: counted');
    assert.equal((await send(proxy.url, 'GET', '/api/games/list', { token: fakeJwt(), headers: nat })).status, 200, 'no session: counted');
    assertRefused(await send(proxy.url, 'GET', '/api/games/list', { headers: nat }));
    assertRefused(await send(proxy.url, 'GET', '/api/games/list', { token: forged, headers: nat }));
    // The address is over its ceiling; a verified session is still served, up to its own limit.
    const token = await hs256({ n: 'late' });
    for (let i = 0; i < 7; i++) assert.equal((await send(proxy.url, 'GET', SESSION_ROUTE, { token, headers: nat })).status, 200);
    assertRefused(await send(proxy.url, 'GET', SESSION_ROUTE, { token, headers: nat }), 'the per-session limit');
  });

  test('with a JWKS never fetched, tokens pass unverified and are counted', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise((resolve) => closed.close(resolve));
    const proxy = await start({ JWT_JWKS_URL: `http://127.0.0.1:${port}/jwks`, RATE_LIMIT_API_PER_ADDRESS_PER_MIN: '3' });
    const header = Buffer.from(JSON.stringify({ alg: 'ES256', kid: 'k' })).toString('base64url');
    const unverified = (n: number) => `${header}.${Buffer.from(JSON.stringify({ sub: '7', n })).toString('base64url')}.c2ln`;
    for (let n = 0; n < 3; n++)
      assert.equal((await send(proxy.url, 'GET', SESSION_ROUTE, { token: unverified(n), headers: from('203.0.113.10') })).status, 200);
    assertRefused(await send(proxy.url, 'GET', SESSION_ROUTE, { token: unverified(3), headers: from('203.0.113.10') }));
  });
});
