/**
 * The peer proxy of the benchmark: Fastify 5 with `@fastify/reply-from`, the usual way to write a
 * Fastify proxy. Same job as the reference (session cookie → `Authorization: Bearer` + `Cookie`
 * upstream, 401 without the cookie), with reply-from's own undici pool and its streamed answer.
 * Logging is off, as in reply-from's own examples.
 *
 * Run as a child process, compiled to JavaScript by `compile.ts`: `node peer.mjs <upstream-origin> <upstream-path> <cookie-name>`;
 * the first line on standard output is `{"port":N}`.
 *
 * @module
 */
import replyFrom from '@fastify/reply-from';
import Fastify from 'fastify';
import { passthroughRoute, serve } from './peer-common.js';

const [origin = 'http://127.0.0.1:1', upstreamPath = '/', cookieName = '__Host-access_token'] = process.argv.slice(2);
const prefix = `${cookieName}=`;

/** The value of the session cookie in a `Cookie` header, or `undefined`. */
function sessionToken(header: string | undefined): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const item = part.trim();
    if (item.startsWith(prefix)) return item.slice(prefix.length) || undefined;
  }
  return undefined;
}

const app = Fastify({ logger: false });
await app.register(replyFrom, {
  base: origin,
  undici: { connections: 128, pipelining: 1, keepAliveTimeout: 4_000 },
});

passthroughRoute(app, upstreamPath, (request) => sessionToken(request.headers.cookie));
await serve(app);
