/**
 * Pipeline step **health and readiness** (two routes outside `/api`, no cookie needed, never shed;
 * CONTRACT.md "Health" and "Resilience", "Readiness"):
 *
 * | route | answers |
 * |---|---|
 * | `GET /healthz` | 200 `{ ok: true }` while the process serves |
 * | `GET /readyz`, before the BFF ever answered | 503 `not_ready` (the BFF is probed, waiting at most {@link READY_PROBE_MS}) |
 * | `GET /readyz`, once the BFF answered once (any HTTP status, a probe or any call) | 200 `{ ok: true, bff: "up" \| "down" }`, whatever the BFF does later |
 * | `GET /readyz`, once the process drains (SIGTERM) | 503 `shutting_down` |
 *
 * A later BFF outage does not make `/readyz` 503: every pod would leave the Service at once, the
 * front end would get the ingress's bare 503, and the cached catalogue could no longer be served.
 * `bff` says whether the BFF answers now: `down` when its latest call or probe failed without an
 * answer (timeout, connection), `up` otherwise. Once ready, a probe runs in the background (at most
 * every {@link READY_PROBE_MS}) and the answer never waits for it.
 *
 * @module
 */
import type { FastifyInstance } from 'fastify';
import { envelope } from '../envelope.js';
import type { UpstreamService } from '../upstream/client.js';
import { UpstreamError } from '../upstream/errors.js';

/** How often the BFF is probed at most, and how long a probe before readiness may be waited for, in milliseconds. */
export const READY_PROBE_MS = 2_000;

/** Options of the {@link health} plugin. */
export interface HealthOptions {
  /** The BFF: its calls and the probe decide readiness. */
  bff: UpstreamService;
  /** True once the process drains (the drain step's flag); default never. */
  draining?: () => boolean;
}

/** `/healthz` and `/readyz` (see the module documentation). */
export async function health(app: FastifyInstance, { bff, draining = () => false }: HealthOptions): Promise<void> {
  app.get('/healthz', { schema: { summary: 'liveness: 200 `{ ok: true }` while the process serves' } }, async () => ({ ok: true }));
  const shuttingDown = envelope('shutting_down', 'The server is shutting down');
  const notReady = envelope('not_ready', 'The BFF has not answered yet');
  let probing: Promise<void> | undefined;
  let probedAt = Number.NEGATIVE_INFINITY;
  /** Probes the BFF (unguarded `GET /`): any HTTP answer, even an unreadable one, is an answer. */
  const probe = (): Promise<void> => {
    if (probing) return probing;
    probedAt = performance.now();
    probing = bff
      .request({ method: 'GET', path: '/', unguarded: true })
      .then(
        () => undefined,
        (error: unknown) => {
          if (error instanceof UpstreamError && error.code === 'upstream_bad_response') bff.lastAnsweredAt = performance.now();
        },
      )
      .finally(() => {
        probing = undefined;
      });
    return probing;
  };
  const summary =
    '503 `not_ready` until the BFF has answered once (any HTTP status), then 200 `{ ok: true, bff: "up" | "down" }` until SIGTERM, whatever the BFF does; 503 `shutting_down` once draining';
  app.get('/readyz', { schema: { summary } }, async (_request, reply) => {
    reply.header('cache-control', 'no-store');
    if (draining()) return reply.code(503).send(shuttingDown);
    if (!bff.answeredOnce) {
      const timeout = new Promise<void>((resolve) => setTimeout(resolve, READY_PROBE_MS).unref());
      await Promise.race([probe(), timeout]);
      // Checked again: a drain that started while the BFF was probed wins.
      if (draining()) return reply.code(503).send(shuttingDown);
      if (!bff.answeredOnce) return reply.code(503).send(notReady);
    } else if (performance.now() - probedAt >= READY_PROBE_MS) {
      void probe();
    }
    return reply.code(200).send({ ok: true, bff: bff.lastFailedAt > bff.lastAnsweredAt ? 'down' : 'up' });
  });
}
