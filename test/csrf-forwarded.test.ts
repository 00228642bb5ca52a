/**
 * The CSRF rule's own origin behind a front-end server's proxy (docs/behaviour.md "CSRF defence"),
 * over real sockets: a proxy whose socket peer (loopback) is in `TRUSTED_PROXIES` takes the request's
 * own host from `X-Forwarded-Host` (its port read by `X-Forwarded-Proto`), as Next.js rewrites, Vite's
 * proxy with `changeOrigin` and `xfwd`, and ingress-nginx send them; a proxy whose peer is not in the
 * list keeps reading `Host` and ignores the forwarded headers (a browser cannot spoof its way in).
 * `POST /api/auth/logout` is the guarded request (it always answers 200 when it passes).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { request } from 'undici';
import { createServer } from '../src/app.js';

interface Row {
  readonly name: string;
  /** `trusted`: the peer is in TRUSTED_PROXIES; `untrusted`: the list holds another range. */
  readonly peer: 'trusted' | 'untrusted';
  readonly host: string;
  readonly origin: string;
  readonly forwardedHost?: string;
  readonly forwardedProto?: string;
  readonly passes: boolean;
}

// The proxy listens on 127.0.0.1; a front-end server on localhost:3000 (Next.js) or :5173 (Vite) sends the proxy's host as Host.
const PROXY_HOST = '127.0.0.1:3001';
const ROWS: readonly Row[] = [
  {
    name: 'Next.js rewrite: Host is the proxy, X-Forwarded-Host the page',
    peer: 'trusted',
    host: PROXY_HOST,
    origin: 'http://localhost:3000',
    forwardedHost: 'localhost:3000',
    forwardedProto: 'http',
    passes: true,
  },
  {
    name: 'Vite changeOrigin + xfwd',
    peer: 'trusted',
    host: PROXY_HOST,
    origin: 'http://localhost:5173',
    forwardedHost: 'localhost:5173',
    forwardedProto: 'http',
    passes: true,
  },
  {
    name: 'ingress TLS: X-Forwarded-Host with :443 and proto https',
    peer: 'trusted',
    host: 'front-proxy.svc:3000',
    origin: 'https://www.example.com',
    forwardedHost: 'www.example.com:443',
    forwardedProto: 'https',
    passes: true,
  },
  {
    name: 'ingress TLS: any scheme of the same host',
    peer: 'trusted',
    host: 'front-proxy.svc:3000',
    origin: 'http://www.example.com',
    forwardedHost: 'www.example.com',
    forwardedProto: 'https',
    passes: true,
  },
  {
    name: "a repeated X-Forwarded-Host: the last value (the trusted hop's)",
    peer: 'trusted',
    host: PROXY_HOST,
    origin: 'http://localhost:3000',
    forwardedHost: 'evil.example, localhost:3000',
    forwardedProto: 'http',
    passes: true,
  },
  {
    name: "trusted peer, another site's origin",
    peer: 'trusted',
    host: PROXY_HOST,
    origin: 'https://evil.example',
    forwardedHost: 'localhost:3000',
    forwardedProto: 'http',
    passes: false,
  },
  {
    name: "trusted peer, the origin of the proxy's Host but another X-Forwarded-Host",
    peer: 'trusted',
    host: PROXY_HOST,
    origin: `http://${PROXY_HOST}`,
    forwardedHost: 'localhost:3000',
    forwardedProto: 'http',
    passes: false,
  },
  {
    name: 'trusted peer, another port',
    peer: 'trusted',
    host: PROXY_HOST,
    origin: 'http://localhost:3001',
    forwardedHost: 'localhost:3000',
    passes: false,
  },
  {
    name: 'trusted peer, no forwarded header: Host decides',
    peer: 'trusted',
    host: 'localhost:3000',
    origin: 'http://localhost:3000',
    passes: true,
  },
  {
    name: 'untrusted peer: X-Forwarded-Host is ignored',
    peer: 'untrusted',
    host: PROXY_HOST,
    origin: 'http://localhost:3000',
    forwardedHost: 'localhost:3000',
    forwardedProto: 'http',
    passes: false,
  },
  {
    name: 'untrusted peer: Host decides',
    peer: 'untrusted',
    host: 'localhost:3000',
    origin: 'http://localhost:3000',
    forwardedHost: 'evil.example',
    passes: true,
  },
];

describe('CSRF own origin from X-Forwarded-Host behind a trusted proxy', () => {
  const proxies: Record<Row['peer'], { app: FastifyInstance; base: string } | undefined> = { trusted: undefined, untrusted: undefined };
  before(async () => {
    for (const [peer, list] of [
      ['trusted', '127.0.0.1'],
      ['untrusted', '10.0.0.0/8'],
    ] as const) {
      // The CSRF rule under test, not the load shedding of a busy machine.
      const app = await createServer({
        NODE_ENV: 'development',
        LOG_LEVEL: 'silent',
        TRUSTED_PROXIES: list,
        LOAD_SHED_EVENT_LOOP_DELAY_MS: '0',
      });
      proxies[peer] = { app, base: await app.listen({ port: 0, host: '127.0.0.1' }) };
    }
  });
  after(async () => {
    for (const p of Object.values(proxies)) await p?.app.close();
  });

  for (const row of ROWS) {
    test(`${row.name} → ${row.passes ? '200' : '403 csrf_rejected'}`, async () => {
      const target = proxies[row.peer];
      assert.ok(target);
      const headers: Record<string, string> = { host: row.host, origin: row.origin, accept: 'application/json' };
      if (row.forwardedHost !== undefined) headers['x-forwarded-host'] = row.forwardedHost;
      if (row.forwardedProto !== undefined) headers['x-forwarded-proto'] = row.forwardedProto;
      const answer = await request(`${target.base}/api/auth/logout`, { method: 'POST', headers });
      const body = (await answer.body.json()) as { error?: string };
      if (row.passes) assert.equal(answer.statusCode, 200, JSON.stringify(body));
      else assert.deepEqual([answer.statusCode, body.error], [403, 'csrf_rejected']);
    });
  }
});
