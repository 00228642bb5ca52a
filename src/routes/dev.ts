/**
 * Development-only routes (spec 1.6, 4.10): every row is `devOnly`, so with `NODE_ENV=production`
 * none of them is registered and each answers 404 like any unknown path. None reads a switch from
 * the request: no query parameter, cookie or header turns anything on, and no answer carries an
 * upstream address or credential.
 *
 * | route | does |
 * |---|---|
 * | `GET, POST /api/dev/cache-clear` | empties the proxy's caches: `{ ok: true, cleared: { <cache>: <entries before> } }` |
 * | `GET /api/dev/cache-policy` | the cache policies and current sizes |
 * | `* /api/dev/proxy/<path>` | forwards to `{bff_base_url}/<path>` with the method, the raw query, the JSON body and the session; the path is checked on the raw URL like `/api/core-sportbook/*` |
 * | `GET /api/dev/visitor-info` | the visitor's address, user agent, language and geo headers (never cookies or credentials) |
 * | `GET /dev/ftd-cashback` | an HTML page that calls the cashback routes |
 * | `GET /debug` | an HTML page: build id, environment, caches |
 * | `GET /debug/analytics` | JSON: the attribution the proxy reads from the tracking cookies |
 *
 * @module
 */
import { CATALOGUE_MAX_BYTES, CATALOGUE_MAX_ENTRIES, catalogueOf } from '../catalogue/catalogue.js';
import { type ProxyAnswer, upstreamFailureAnswer } from '../envelope.js';
import { gaClientIdFromCookie, trackingFromCookie } from '../session/attribution.js';
import { readSessionToken } from '../session/cookie.js';
import { PROFILE_MAX_ENTRIES, PROFILE_TTL_MS } from '../session/profile-cache.js';
import type { HttpMethod } from '../upstream/client.js';
import {
  HANDSHAKE_DEFAULT_TTL_MS,
  HANDSHAKE_MARGIN_MS,
  HANDSHAKE_MAX_ENTRIES,
  HANDSHAKE_MAX_TTL_MS,
  handshakesOf,
} from '../session/sticker-handshakes.js';
import { rawSubPath } from '../upstream/paths.js';
import { bff, ok, route, type RouteSpec, routeTable } from './route.js';

/** Route prefix of the generic forwarder and the BFF prefix it maps to. */
export const DEV_PROXY = { route: '/api/dev/proxy/', upstream: '/' } as const;
/** Methods the generic forwarder accepts. */
export const DEV_PROXY_METHODS: readonly HttpMethod[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];
/** Request headers that may name the visitor's country (set by CDNs and load balancers). */
const GEO_HEADERS = ['cf-ipcountry', 'x-vercel-ip-country', 'x-country-code', 'cloudfront-viewer-country'] as const;

function html(title: string, body: string): ProxyAnswer {
  const page = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{font:15px/1.5 system-ui,sans-serif;margin:2rem;max-width:48rem}code,pre{background:#f4f4f4;padding:.1rem .3rem}
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.2rem .6rem;text-align:left}</style></head>
<body>${body}</body></html>`;
  return { status: 200, body: page, contentType: 'text/html; charset=utf-8' };
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const FTD_PAGE = `<h1>First-deposit cashback (development)</h1>
<p>Calls <code>POST /api/ftd-cashback/verify</code> and <code>POST /api/ftd-cashback/send-cashback</code> with your session.</p>
<p><label>depositId <input id="deposit" value="" placeholder="optional"></label></p>
<p><button id="verify">Verify eligibility</button> <button id="send">Send cashback</button></p>
<pre id="out">…</pre>
<script>
const out = document.getElementById('out');
async function call(path) {
  const deposit = document.getElementById('deposit').value.trim();
  const res = await fetch(path, { method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify(deposit ? { depositId: deposit } : {}) });
  out.textContent = res.status + ' ' + await res.text();
}
document.getElementById('verify').onclick = () => call('/api/ftd-cashback/verify');
document.getElementById('send').onclick = () => call('/api/ftd-cashback/send-cashback');
</script>`;

/** Dev-only rows of spec 1.6 and 4.10. */
export const devRoutes: readonly RouteSpec[] = routeTable('Development', [
  route({
    method: ['GET', 'POST'],
    url: '/api/dev/cache-clear',
    spec: '4.10',
    summary: "clear the proxy's local caches (dev only)",
    auth: 'none',
    devOnly: true,
    evictsProfile: false,
    upstream: [],
    handler: async (ctx) => ok({ ok: true, cleared: (await ctx.deps.state.fleet.purge()).cleared }),
  }),
  route({
    method: 'GET',
    url: '/api/dev/cache-policy',
    spec: '4.10',
    summary: 'inspect the cache policies and sizes (dev only)',
    auth: 'none',
    devOnly: true,
    upstream: [],
    handler: async (ctx) => {
      const catalogue = catalogueOf(ctx.deps); // created (and registered) so that its size shows
      handshakesOf(ctx.deps.caches);
      const ttlMs = ctx.deps.config.catalogueCacheTtlMs;
      return ok({
        policies: {
          profile: { scope: 'session (SHA-256 of the token)', ttlMs: PROFILE_TTL_MS, maxEntries: PROFILE_MAX_ENTRIES },
          catalogue: {
            scope: 'anonymous catalogue reads',
            ttlMs,
            staleWhileRevalidateMs: ttlMs,
            singleFlight: true,
            maxEntries: CATALOGUE_MAX_ENTRIES,
            maxBytes: CATALOGUE_MAX_BYTES,
          },
          'catalogue-index': { scope: 'assembled game index', ttlMs, staleWhileRevalidateMs: ttlMs, maxEntries: 1 },
          'sticker-handshake': {
            scope: 'session (SHA-256 of the token)',
            ttlMs: `expires_in - ${HANDSHAKE_MARGIN_MS}, at most ${HANDSHAKE_MAX_TTL_MS}, default ${HANDSHAKE_DEFAULT_TTL_MS}`,
            maxEntries: HANDSHAKE_MAX_ENTRIES,
          },
        },
        sizes: Object.fromEntries([...ctx.deps.caches].map(([name, cache]) => [name, cache.size])),
        catalogueEnabled: catalogue.answers.enabled,
      });
    },
  }),
  route({
    method: DEV_PROXY_METHODS,
    url: '/api/dev/proxy/*',
    spec: '4.10',
    summary: 'generic forwarder to the BFF with the session (dev only); the sub-path is checked on the raw URL',
    auth: 'none',
    devOnly: true,
    evictsProfile: false,
    upstream: [bff('GET', '/{subPath}')],
    handler: async (ctx) => {
      const target = rawSubPath(ctx.request.raw.url ?? '', DEV_PROXY.route, DEV_PROXY.upstream);
      const method = ctx.request.method as HttpMethod;
      const json = method === 'GET' || method === 'HEAD' || method === 'DELETE' ? undefined : (ctx.body ?? {});
      const res = await ctx.call('bff', { method, path: target.path, rawQuery: target.rawQuery, json });
      if (res.status < 200 || res.status >= 300) return upstreamFailureAnswer(res);
      const type = res.headers['content-type'];
      return { status: res.status, body: res.body, contentType: typeof type === 'string' ? type : 'application/octet-stream' };
    },
  }),
  route({
    method: 'GET',
    url: '/api/dev/visitor-info',
    spec: '4.10',
    summary: "the visitor's address, user agent, language and geo headers (dev only)",
    auth: 'none',
    devOnly: true,
    upstream: [],
    handler: async (ctx) => {
      const { request } = ctx;
      const geo: Record<string, string> = {};
      for (const name of GEO_HEADERS) {
        const value = request.headers[name];
        if (typeof value === 'string') geo[name] = value.slice(0, 64);
      }
      return ok({
        ip: request.ip,
        ips: request.ips ?? [request.ip],
        protocol: request.protocol,
        host: request.host,
        userAgent: request.headers['user-agent'] ?? null,
        acceptLanguage: request.headers['accept-language'] ?? null,
        geo,
        hasSession: readSessionToken(request) !== undefined,
      });
    },
  }),
  route({
    method: 'GET',
    url: '/dev/ftd-cashback',
    spec: '1.6',
    summary: 'a page that calls the cashback routes (dev only)',
    auth: 'none',
    devOnly: true,
    cacheControl: 'no-store',
    upstream: [],
    handler: async () => html('First-deposit cashback', FTD_PAGE),
  }),
  route({
    method: 'GET',
    url: '/debug',
    spec: '1.6',
    summary: 'a page with the build id, environment and caches (dev only)',
    auth: 'none',
    devOnly: true,
    cacheControl: 'no-store',
    upstream: [],
    handler: async (ctx) => {
      const rows = [...ctx.deps.caches].map(([name, cache]) => `<tr><td>${escapeHtml(name)}</td><td>${cache.size}</td></tr>`).join('');
      return html(
        'Debug',
        `<h1>Front proxy (development)</h1>
<p>Build <code>${escapeHtml(ctx.deps.config.buildId)}</code>, environment <code>${escapeHtml(ctx.deps.config.nodeEnv)}</code>,
embedded sandbox: ${ctx.deps.config.useSandbox ? 'yes' : 'no'}.</p>
<h2>Caches</h2><table><tr><th>cache</th><th>entries</th></tr>${rows}</table>
<p><a href="/api/dev/cache-policy">cache policies</a> · <a href="/debug/analytics">analytics</a> ·
<a href="/api/dev/visitor-info">visitor info</a> · <a href="/dev/ftd-cashback">cashback</a></p>`,
      );
    },
  }),
  route({
    method: 'GET',
    url: '/debug/analytics',
    spec: '1.6',
    summary: 'the attribution read from the tracking cookies (dev only)',
    auth: 'none',
    devOnly: true,
    cacheControl: 'no-store',
    upstream: [],
    handler: async (ctx) =>
      ok({
        tracking: trackingFromCookie(ctx.request.cookies.cookie_tracking),
        gaClientId: gaClientIdFromCookie(ctx.request.cookies._ga) ?? null,
        cookies: {
          cookie_tracking: ctx.request.cookies.cookie_tracking !== undefined,
          _ga: ctx.request.cookies._ga !== undefined,
        },
      }),
  }),
]);
