/**
 * Pipeline step **request context** (first `onRequest` hook; the id is made before any hook): every
 * request gets an id — the caller's `X-Request-Id` when it is a safe token of at most 64 characters,
 * else a random UUID — which is answered as `X-Request-Id`, sent upstream and bound to the request's
 * logger; its time is Fastify's `reply.elapsedTime`. Every answer carries `X-Content-Type-Options:
 * nosniff`, and every `/api` answer `Cache-Control: no-store` unless its route declares otherwise
 * (CONTRACT.md "Session cookie").
 *
 * @module
 */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyServerOptions } from 'fastify';
import fp from 'fastify-plugin';

const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

/** Fastify constructor options of this step: the request id. */
export const requestIdOptions: Pick<FastifyServerOptions, 'genReqId' | 'requestIdHeader'> = {
  genReqId: (req) => {
    const given = req.headers['x-request-id'];
    return typeof given === 'string' && SAFE_REQUEST_ID.test(given) ? given : randomUUID();
  },
  requestIdHeader: false,
};

/** The headers every answer starts with. */
export const requestContext = fp(
  async (app: FastifyInstance) => {
    app.addHook('onRequest', (request, reply, done) => {
      reply.header('x-request-id', request.id);
      reply.header('x-content-type-options', 'nosniff');
      if (request.url.startsWith('/api/')) reply.header('cache-control', 'no-store');
      done();
    });
  },
  { name: 'request-context' },
);
