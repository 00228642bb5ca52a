/**
 * Pipeline step **health and readiness** (two routes outside `/api`, no cookie needed, never shed;
 * docs/behaviour.md "Health" and "Resilience", "Readiness"):
 *
 * | route | answers |
 * |---|---|
 * | `GET /healthz` | 200 `{ ok: true }` while the process serves |
 * | `GET /readyz`, before the BFF ever answered | 503 `not_ready` (the BFF is probed, waiting at most {@link READY_PROBE_MS}) |
 * | `GET /readyz`, once the BFF answered once (any HTTP status, a probe or any call) | 200 `{ ok: true, bff: "up" \| "down" }`, whatever the BFF does later; with `moneyMoves: "refused"` and `moneyMovesDetail` (why) while money moves answer 503 `idempotency_unavailable` |
 * | `GET /readyz`, once the process drains (SIGTERM) | 503 `shutting_down` |
 *
 * A later BFF outage does not make `/readyz` 503: every pod would leave the Service at once, the
 * front end would get the ingress's bare 503, and the cached catalogue could no longer be served.
 * `bff` says whether the BFF answers now: `down` when its latest call or probe failed without an
 * answer (timeout, connection), `up` otherwise. Once ready, a probe runs in the background (at most
 * every {@link READY_PROBE_MS}) and the answer never waits for it.
 *
 * Both are probes (route config `probe`): their lines are logged at debug, they are not timed in
 * `http_request_duration_seconds` and not traced, and neither is the readiness probe's BFF call.
 *
 * With `HEALTH_PORT`, both routes are also served on a listener of their own
 * ({@link createHealthListener}): probes pointed at it never wait in the public port's accept queue
 * behind a storm of client connections, and are never refused by its bound on open connections
 * (`MAX_CONNECTIONS`).
 *
 * @module
 */
import { createServer as createHttpServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance, FastifyRequest } from 'fastify';
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
  /**
   * Why money moves are refused now (the shared state unreachable, its replicas not acknowledging),
   * or `undefined`; said in the body, never a 503 (docs/behaviour.md "Several instances").
   */
  moneyMovesRefusal?: () => string | undefined;
}

/** `/healthz` and `/readyz` (see the module documentation). */
export async function health(
  app: FastifyInstance,
  { bff, draining = () => false, moneyMovesRefusal = () => undefined }: HealthOptions,
): Promise<void> {
  // `probe`: logged at debug, left out of the request metrics and of the traces (pipeline/logging.ts).
  app.get(
    '/healthz',
    { config: { probe: true, area: 'Infrastructure' }, schema: { summary: 'liveness: 200 `{ ok: true }` while the process serves' } },
    async () => ({ ok: true }),
  );
  const shuttingDown = envelope('shutting_down', 'The server is shutting down');
  const notReady = envelope('not_ready', 'The BFF has not answered yet');
  let probing: Promise<void> | undefined;
  let probedAt = Number.NEGATIVE_INFINITY;
  /**
   * Probes the BFF (unguarded `GET /`): any HTTP answer, even an unreadable one, is an answer. Its span
   * (tracing on) is a root span linked to the `/readyz` request that caused it.
   */
  const probe = (cause: FastifyRequest): Promise<void> => {
    if (probing) return probing;
    probedAt = performance.now();
    probing = bff
      .request({ method: 'GET', path: '/', unguarded: true, traceRoot: true }, undefined, cause)
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
  app.get('/readyz', { config: { probe: true, area: 'Infrastructure' }, schema: { summary } }, async (request, reply) => {
    reply.header('cache-control', 'no-store');
    if (draining()) return reply.code(503).send(shuttingDown);
    if (!bff.answeredOnce) {
      const timeout = new Promise<void>((resolve) => setTimeout(resolve, READY_PROBE_MS).unref());
      await Promise.race([probe(request), timeout]);
      // Checked again: a drain that started while the BFF was probed wins.
      if (draining()) return reply.code(503).send(shuttingDown);
      if (!bff.answeredOnce) return reply.code(503).send(notReady);
    } else if (performance.now() - probedAt >= READY_PROBE_MS) {
      void probe(request);
    }
    const refusal = moneyMovesRefusal();
    const moneyMoves = refusal === undefined ? {} : { moneyMoves: 'refused', moneyMovesDetail: refusal };
    return reply.code(200).send({ ok: true, bff: bff.lastFailedAt > bff.lastAnsweredAt ? 'down' : 'up', ...moneyMoves });
  });
}

/** Most connections the health listener keeps open at once (a probe opens one at a time); more are closed at accept. */
export const HEALTH_MAX_CONNECTIONS = 64;
/** Time limits of the health listener's connections (headers, whole request, idle keep-alive), in milliseconds. */
export const HEALTH_TIMEOUT_MS = 5_000;
/** The paths the health listener serves; any other answers 404 `not_found`. */
const HEALTH_PATHS: ReadonlySet<string> = new Set(['/healthz', '/readyz']);
const NOT_FOUND_BODY = JSON.stringify(envelope('not_found', 'Only /healthz and /readyz are served on this port'));

/** The health listener of {@link createHealthListener}. */
export interface HealthListener {
  /**
   * Starts listening on `port` at `host` (`0`: any free port).
   *
   * @returns its base URL, such as `http://127.0.0.1:9091`.
   * @throws the listen error (port taken, address not bindable).
   */
  listen(port: number, host: string): Promise<string>;
}

/**
 * The health listener (`HEALTH_PORT`, docs/configuration.md): `GET /healthz` and `GET /readyz`
 * on a port of their own, answered by the app's own routes (`app.routing`: the same answers, drain and
 * readiness as on the public port, which keeps serving them too); any other request answers 404
 * `not_found` without reaching the app. At most {@link HEALTH_MAX_CONNECTIONS} connections are open at
 * once, each bounded by {@link HEALTH_TIMEOUT_MS}. The listener closes with the app. Made by
 * `createServer` when `HEALTH_PORT` is set (`app.healthListener`), before the app is ready (it adds a
 * close hook); `server.ts` starts it once the app listens.
 *
 * @param app - the proxy app, not yet listening.
 */
export function createHealthListener(app: FastifyInstance): HealthListener {
  let server: Server | undefined;
  app.addHook('onClose', async () => {
    if (server === undefined) return;
    const closing = server;
    await new Promise<void>((resolve) => {
      closing.close(() => resolve());
      closing.closeAllConnections();
    });
  });
  return {
    async listen(port: number, host: string): Promise<string> {
      const listener = createHttpServer(
        { headersTimeout: HEALTH_TIMEOUT_MS, requestTimeout: HEALTH_TIMEOUT_MS, keepAliveTimeout: HEALTH_TIMEOUT_MS },
        (req, res) => {
          const path = (req.url ?? '').split('?', 1)[0] as string;
          if (HEALTH_PATHS.has(path)) {
            app.routing(req, res);
            return;
          }
          res.writeHead(404, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });
          res.end(NOT_FOUND_BODY);
        },
      );
      listener.maxConnections = HEALTH_MAX_CONNECTIONS;
      await new Promise<void>((resolve, reject) => {
        listener.once('error', reject);
        listener.listen(port, host, () => {
          listener.off('error', reject);
          resolve();
        });
      });
      server = listener;
      const { address, port: bound } = listener.address() as AddressInfo;
      return `http://${address.includes(':') ? `[${address}]` : address}:${bound}`;
    },
  };
}
