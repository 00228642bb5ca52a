/**
 * docs/behaviour.md "Rate limits and client address": the client address is read once per request
 * (`clientHops`, `clientAddress`), and the trust check given to Fastify (`trustedProxyCheck`) answers
 * exactly as the check `@fastify/proxy-addr` compiles from `TRUSTED_PROXIES`, whatever it remembered
 * of the socket peers before. Over sockets, the chains and the counts behind a trusted proxy are
 * tested in rate-limits.test.ts and rate-limit-address.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import proxyAddr from '@fastify/proxy-addr';
import type { FastifyRequest } from 'fastify';
import { clientAddress, clientHops, trustedProxyCheck } from '../src/session/client.js';

const LISTS: readonly (readonly string[])[] = [['127.0.0.1'], ['10.0.0.0/8', '192.168.1.7'], ['::1', '2001:db8::/32'], ['loopback']];
const ADDRESSES = [
  '127.0.0.1',
  '127.0.0.2',
  '10.1.2.3',
  '192.168.1.7',
  '192.168.1.8',
  '::1',
  '::ffff:127.0.0.1',
  '::ffff:10.1.2.3',
  '2001:db8:1::1',
  '2001:db9::1',
  'not an address',
  '',
];

describe('trustedProxyCheck', () => {
  for (const list of LISTS) {
    test(`answers as @fastify/proxy-addr's compile(${list.join(',')}) for every address and hop, asked twice`, () => {
      const expected = proxyAddr.compile([...list]);
      const check = trustedProxyCheck(list);
      for (const round of [1, 2]) {
        for (const address of ADDRESSES) {
          for (const hop of [0, 1, 2]) {
            assert.equal(check(address, hop), expected(address, hop), `round ${round}: ${address} at hop ${hop}`);
          }
        }
      }
    });
  }

  test('keeps answering right once more socket peers came than it remembers', () => {
    const check = trustedProxyCheck(['10.0.0.0/24']);
    for (let round = 0; round < 2; round++) {
      for (let n = 0; n < 300; n++) {
        const inside = `10.0.0.${n % 256}`;
        const outside = `10.0.${1 + (n % 200)}.1`;
        assert.equal(check(inside, 0), true, inside);
        assert.equal(check(outside, 0), false, outside);
      }
    }
  });
});

/** A request whose `ip` and `ips` count their reads, as Fastify's getters compute on each. */
function countingRequest(ips: string[] | undefined, ip: string): { request: FastifyRequest; reads: () => number } {
  let reads = 0;
  const request = {
    clientHops: undefined,
    get ips() {
      reads++;
      return ips === undefined ? undefined : [...ips];
    },
    get ip() {
      reads++;
      return ip;
    },
  };
  return { request: request as unknown as FastifyRequest, reads: () => reads };
}

describe('clientHops and clientAddress', () => {
  const cases: [name: string, ips: string[] | undefined, ip: string, hops: string[], address: string][] = [
    ['behind a trusted proxy', ['127.0.0.1', '203.0.113.7'], '203.0.113.7', ['127.0.0.1', '203.0.113.7'], '203.0.113.7'],
    [
      'behind two trusted proxies',
      ['127.0.0.1', '10.0.0.1', '198.51.100.2'],
      '198.51.100.2',
      ['127.0.0.1', '10.0.0.1', '198.51.100.2'],
      '198.51.100.2',
    ],
    ['from an untrusted peer', ['192.0.2.9'], '192.0.2.9', ['192.0.2.9'], '192.0.2.9'],
    ['without TRUSTED_PROXIES (no ips)', undefined, '192.0.2.10', ['192.0.2.10'], '192.0.2.10'],
  ];
  for (const [name, ips, ip, hops, address] of cases) {
    test(`${name}: ${address}, read from Fastify once however often asked`, () => {
      const { request, reads } = countingRequest(ips, ip);
      for (let i = 0; i < 3; i++) {
        assert.deepEqual(clientHops(request), hops);
        assert.equal(clientAddress(request), address);
      }
      assert.equal(reads(), ips === undefined ? 2 : 1);
    });
  }
});
