/**
 * Pipeline step **health and readiness** (two routes outside `/api`, no cookie needed; CONTRACT.md
 * "Health"): `GET /healthz` answers 200 `{ ok: true }` while the process serves; `GET /readyz` answers
 * 200 once the BFF can be reached (any HTTP answer), else 503 `not_ready`. The BFF probe is made at
 * most every {@link READY_PROBE_MS} and waits at most that long.
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
}

/** `/healthz` and `/readyz` (see the module documentation). */
export async function health(app: FastifyInstance, { bff }: HealthOptions): Promise<void> {
  app.get('/healthz', { schema: { summary: 'liveness: 200 `{ ok: true }` while the process serves' } }, async () => ({ ok: true }));
  let ready: { at: number; ok: boolean } | undefined;
  const summary = 'readiness: 200 `{ ok: true }` once the BFF can be reached (any HTTP answer), else 503 `not_ready`';
  app.get('/readyz', { schema: { summary } }, async (_request, reply) => {
    const now = Date.now();
    if (!ready || now - ready.at > READY_PROBE_MS) {
      const probe = bff
        .request({ method: 'GET', path: '/' })
        .then(() => true)
        .catch((error: unknown) => error instanceof UpstreamError && error.code === 'upstream_bad_response');
      const timeout = new Promise<boolean>((resolve) => setTimeout(resolve, READY_PROBE_MS, false).unref());
      ready = { at: now, ok: await Promise.race([probe, timeout]) };
    }
    reply.header('cache-control', 'no-store');
    return reply.code(ready.ok ? 200 : 503).send(ready.ok ? { ok: true } : envelope('not_ready', 'The BFF cannot be reached'));
  });
}
