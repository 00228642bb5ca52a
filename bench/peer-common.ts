/**
 * What the bench's two peers (`peer.ts`, `peer-assembled.ts`) share: the passthrough route — the
 * session cookie's value as `Authorization: Bearer` with the browser's `Cookie` upstream, 401
 * `{ reason: 'no_token' }` without it — and the start and stop of the process (the first line on
 * standard output is `{"port":N}`).
 *
 * @module
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';

/**
 * Registers `GET /*` on `app` (which has `@fastify/reply-from` registered): forwards to
 * `upstreamPath` with the token `tokenOf` reads from the request, or answers 401 without one.
 */
export function passthroughRoute(
  app: FastifyInstance,
  upstreamPath: string,
  tokenOf: (request: FastifyRequest) => string | undefined,
): void {
  app.get('/*', (request, reply) => {
    const token = tokenOf(request);
    if (!token) {
      reply.code(401).send({ reason: 'no_token' });
      return reply;
    }
    return reply.from(upstreamPath, {
      rewriteRequestHeaders: (_req, headers) => ({
        accept: 'application/json',
        cookie: headers.cookie,
        authorization: `Bearer ${token}`,
      }),
    });
  });
}

/** Listens on a free loopback port, prints `{"port":N}`, and closes on SIGTERM or SIGINT. */
export async function serve(app: FastifyInstance): Promise<void> {
  const address = await app.listen({ port: 0, host: '127.0.0.1' });
  process.stdout.write(`${JSON.stringify({ port: Number(new URL(address).port) })}\n`);
  const stop = () => void app.close().then(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
