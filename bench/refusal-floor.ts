/**
 * The floors of a refusal (bench/README.md "Instructions per request"): the least a server can do to
 * answer the proxy's 401 of a session route without the session cookie, on `node:http` alone
 * (`http`) or on a bare Fastify app (`fastify`). Every request gets the proxy's answer: status 401,
 * its body `{"reason":"no_token"}` byte for byte, and its headers (`X-Request-Id`, a random UUID per
 * request as the proxy makes one when the client sends none; `X-Content-Type-Options`,
 * `Cache-Control`, `Content-Type`, `X-Error-Ref` of that refusal, `Content-Length`), Node's own
 * `Date` and keep-alive headers with the proxy's keep-alive timeout. Nothing is sent upstream.
 *
 * - `http`: a `node:http` server whose one listener writes the answer, the headers but the request id
 *   serialised once at start. What Node.js's HTTP server costs a refusal.
 * - `fastify`: a Fastify app without logger, one route (`GET /api/user/last-casino-games`), answering
 *   from its first `onRequest` hook with the headers set built once. What Fastify adds to it: its
 *   routing, its request and reply objects, its hook runner and `reply.send`.
 *
 * Run as a child process, compiled to JavaScript by `compile.ts`: `node refusal-floor.mjs http|fastify`;
 * the first line on standard output is `{"port":N}`.
 *
 * @module
 */
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';

/** The route the 401 row asks for (`instructions.ts`, `PASSTHROUGH.path`). */
const ROUTE = '/api/user/last-casino-games';
/** The proxy's body of the refusal (spec 7.3). */
const BODY = Buffer.from('{"reason":"no_token"}');
/** The proxy's keep-alive timeout (`KEEP_ALIVE_TIMEOUT_MS`' default), in milliseconds: Node writes it in `Keep-Alive`. */
const KEEP_ALIVE_TIMEOUT_MS = 65_000;
/** The proxy's answer headers but the request id, in the proxy's order. */
const HEADERS: readonly (readonly [string, string])[] = [
  ['x-content-type-options', 'nosniff'],
  ['cache-control', 'no-store'],
  ['content-type', 'application/json; charset=utf-8'],
  ['x-error-ref', 'EP0712-EM0001'],
  ['content-length', String(BODY.length)],
];

const kind = process.argv[2];

/** The `node:http` floor: the headers as a flat list, the request id put in front of them per request. */
function httpFloor(): { listen: (ready: (port: number) => void) => void; close: () => void } {
  const fixed = HEADERS.flat();
  const server = createServer({ keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS }, (_req, res) => {
    res.writeHead(401, ['x-request-id', randomUUID(), ...fixed]);
    res.end(BODY);
  });
  return {
    listen: (ready) => server.listen(0, '127.0.0.1', () => ready((server.address() as AddressInfo).port)),
    close: () => {
      server.closeAllConnections();
      server.close(() => process.exit(0));
    },
  };
}

/** The Fastify floor: one route, answered from its first `onRequest` hook. */
function fastifyFloor(): { listen: (ready: (port: number) => void) => void; close: () => void } {
  const app = Fastify({ logger: false, keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS, genReqId: () => randomUUID() });
  const fixed = Object.fromEntries(HEADERS);
  // Two parameters: the hook never goes on to the route, so it takes no `done`.
  app.addHook('onRequest', (request, reply) => {
    reply.code(401).header('x-request-id', request.id).headers(fixed).send(BODY);
  });
  app.get(ROUTE, async () => ({}));
  return {
    listen: (ready) => {
      void app.listen({ port: 0, host: '127.0.0.1' }).then(() => ready((app.server.address() as AddressInfo).port));
    },
    close: () => void app.close().then(() => process.exit(0)),
  };
}

if (kind !== 'http' && kind !== 'fastify') throw new Error(`refusal-floor: http or fastify, not ${String(kind)}`);
const floor = kind === 'http' ? httpFloor() : fastifyFloor();
floor.listen((port) => process.stdout.write(`${JSON.stringify({ port })}\n`));
process.on('SIGTERM', floor.close);
process.on('SIGINT', floor.close);
