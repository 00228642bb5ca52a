/**
 * The assembled peer of the benchmark: the proxy a team would put together from the usual Fastify
 * plugins instead of this one — `@fastify/reply-from` for the upstream call, pino request logging
 * (Fastify's own two lines a request, to `/dev/null`), `@fastify/cookie` for the session cookie,
 * `@fastify/rate-limit` per session (a limit no run reaches) and prom-client request metrics (a
 * histogram by method, route and status). Same job as the bare peer (`peer.ts`): session cookie →
 * `Authorization: Bearer` + `Cookie` upstream, 401 without the cookie.
 *
 * Run as a child process, compiled to JavaScript by `compile.ts`: `node peer-assembled.mjs <upstream-origin> <upstream-path> <cookie-name>`;
 * the first line on standard output is `{"port":N}`.
 *
 * @module
 */
import cookie from '@fastify/cookie';
import rateLimit from '@fastify/rate-limit';
import replyFrom from '@fastify/reply-from';
import Fastify, { type FastifyBaseLogger } from 'fastify';
import { passthroughRoute, serve } from './peer-common.js';
import pino from 'pino';
import { Histogram, Registry } from 'prom-client';

const [origin = 'http://127.0.0.1:1', upstreamPath = '/', cookieName = '__Host-access_token'] = process.argv.slice(2);

const logger: FastifyBaseLogger = pino({ level: 'info' }, pino.destination({ dest: '/dev/null', sync: false }));
const app = Fastify({ loggerInstance: logger });
await app.register(cookie);
await app.register(rateLimit, {
  max: 1_000_000_000,
  timeWindow: 60_000,
  keyGenerator: (request) => request.cookies[cookieName] ?? request.ip,
});
await app.register(replyFrom, {
  base: origin,
  undici: { connections: 128, pipelining: 1, keepAliveTimeout: 4_000 },
});

const registry = new Registry();
const duration = new Histogram({
  name: 'http_request_duration_seconds',
  help: 'Request duration',
  labelNames: ['method', 'route', 'status_code'],
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  registers: [registry],
});
app.addHook('onResponse', (request, reply, done) => {
  duration.observe(
    { method: request.method, route: request.routeOptions.url ?? '', status_code: String(reply.statusCode) },
    reply.elapsedTime / 1000,
  );
  done();
});

passthroughRoute(app, upstreamPath, (request) => request.cookies[cookieName]);
await serve(app);
