/**
 * Pipeline step **health and readiness** (two routes outside `/api`, no cookie needed; CONTRACT.md
 * "Health"): `GET /healthz` answers 200 `{ ok: true }` while the process serves; `GET /readyz` answers
 * 200 once the BFF can be reached (any HTTP answer), else 503 `not_ready`. The BFF probe is made at
 * most every {@link READY_PROBE_MS} and waits at most that long. Once the process drains (SIGTERM,
 * CONTRACT.md "Operations"), `/readyz` answers 503 `shutting_down` at once, whatever the BFF.
 *
 * @module
 */
import type { FastifyInstance } from 'fastify';
import { envelope } from '../envelope.js';
import type { UpstreamService } from '../upstream/client.js';
import { UpstreamError } from '../upstream/errors.js';

/** How long a readiness answer is reused, and how long the BFF probe may take, in milliseconds. */
export const READY_PROBE_MS = 2_000;

/** Options of the {@link health} plugin. */
export interface HealthOptions {
  /** The BFF, probed by `/readyz`. */
  bff: UpstreamService;
  /** True once the process drains (the drain step's flag); default never. */
  draining?: () => boolean;
}

/** `/healthz` and `/readyz` (see the module documentation). */
export async function health(app: FastifyInstance, { bff, draining = () => false }: HealthOptions): Promise<void> {
  app.get('/healthz', { schema: { summary: 'liveness: 200 `{ ok: true }` while the process serves' } }, async () => ({ ok: true }));
  let ready: { at: number; ok: boolean } | undefined;
  const shuttingDown = envelope('shutting_down', 'The server is shutting down');
  const summary = 'readiness: 200 `{ ok: true }` once the BFF can be reached (any HTTP answer), else 503 `not_ready`; 503 `shutting_down` once draining';
  app.get('/readyz', { schema: { summary } }, async (_request, reply) => {
    reply.header('cache-control', 'no-store');
    if (draining()) return reply.code(503).send(shuttingDown);
    const now = Date.now();
    if (!ready || now - ready.at > READY_PROBE_MS) {
      const probe = bff
        .request({ method: 'GET', path: '/' })
        .then(() => true)
        .catch((error: unknown) => error instanceof UpstreamError && error.code === 'upstream_bad_response');
      const timeout = new Promise<boolean>((resolve) => setTimeout(resolve, READY_PROBE_MS, false).unref());
      ready = { at: now, ok: await Promise.race([probe, timeout]) };
    }
    // Checked again: a drain that started while the BFF was probed wins.
    if (draining()) return reply.code(503).send(shuttingDown);
    return reply.code(ready.ok ? 200 : 503).send(ready.ok ? { ok: true } : envelope('not_ready', 'The BFF cannot be reached'));
  });
}
