/**
 * Pipeline step **drain** (graceful shutdown; CONTRACT.md "Operations", SIGTERM, and "Error envelope",
 * the `shutting_down` row). Its `onRequest` hook runs right after the request context's; its `onSend`
 * hook marks the last answer of a connection while draining.
 *
 * {@link createDrain} gives the plugin, which adds `app.drain()`, and the `draining` flag the health step
 * reads. The process entry point calls `app.drain()` on SIGTERM:
 *
 * 1. At once, `/readyz` answers 503 `shutting_down`; requests are still served normally, but the last
 *    answer on each connection says `Connection: close`, so clients and load balancers stop reusing
 *    connections to this process.
 * 2. After `SHUTDOWN_DELAY_MS` the listener closes (no new connection is accepted) and idle kept-alive
 *    connections are closed. A request that still arrives on a kept-alive connection answers 503, the
 *    envelope `shutting_down`, with `Connection: close` (never Fastify's own 503 body); in-flight
 *    requests finish, each closing its connection when it is answered.
 * 3. After `SHUTDOWN_TIMEOUT_MS` the remaining connections are destroyed, cutting the requests still
 *    open. `app.drain()` resolves once the app is closed (upstream pools included), or, when requests
 *    were cut, at most {@link CLOSE_AFTER_CUT_MS} later, telling how many requests were cut.
 *
 * @module
 */
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import fp from 'fastify-plugin';
import { envelope } from '../envelope.js';

/** Options of {@link createDrain}, from the configuration. */
export interface DrainOptions {
  /** `SHUTDOWN_DELAY_MS`: time between the start of the drain and the closing of the listener, in milliseconds. */
  delayMs: number;
  /** `SHUTDOWN_TIMEOUT_MS`: time in-flight requests get once the listener is closed, in milliseconds. */
  timeoutMs: number;
}

/** Where a drain is: `serving` before it starts, `draining` during the delay, `closed` once the listener is closed. */
export type DrainPhase = 'serving' | 'draining' | 'closed';

/** How a drain ended. */
export interface DrainOutcome {
  /** Requests still open when `SHUTDOWN_TIMEOUT_MS` ran out, whose connections were destroyed (0: all finished). */
  cut: number;
}

/** The drain step of one app: its plugin and its state. */
export interface Drain {
  /** Registers the hooks and decorates the app with {@link FastifyInstance.drain}. */
  readonly plugin: FastifyPluginAsync;
  /** True from the moment the drain starts (`/readyz` then answers 503). */
  readonly draining: () => boolean;
}

/** Once requests were cut, how long the app's close hooks may still take before the drain ends anyway, in milliseconds. */
const CLOSE_AFTER_CUT_MS = 1_000;

/** The body of a request refused while the process shuts down. */
const SHUTTING_DOWN = envelope('shutting_down', 'The server is shutting down; send the request again');

/**
 * Makes the drain step (see the module documentation).
 *
 * @param options - the delay and the time limit, in milliseconds (`SHUTDOWN_DELAY_MS`, `SHUTDOWN_TIMEOUT_MS`).
 * @returns the plugin to register after the request context, and the state the health step reads.
 */
export function createDrain(options: DrainOptions): Drain {
  let phase: DrainPhase = 'serving';

  const plugin = fp(
    async (app: FastifyInstance) => {
      const server = app.server;
      /** Requests received and not yet answered (or aborted). */
      let inFlight = 0;
      /** The latest request received on each connection: its answer is the one that says `Connection: close`. */
      const latest = new WeakMap<Socket, IncomingMessage>();
      let sweepQueued = false;
      /** Once the listener is closed, a connection left idle by an answer without `Connection: close` is closed. */
      const sweepIdle = () => {
        if (sweepQueued) return;
        sweepQueued = true;
        setImmediate(() => {
          sweepQueued = false;
          server.closeIdleConnections();
        });
      };
      // Before Fastify's own listener, so that the count and the latest request are known to its hooks.
      server.prependListener('request', (req: IncomingMessage, res) => {
        inFlight++;
        latest.set(req.socket, req);
        res.once('close', () => {
          inFlight--;
          if (phase === 'closed') sweepIdle();
        });
      });

      app.addHook('onRequest', (_request, reply, done) => {
        if (phase !== 'closed') {
          done();
          return;
        }
        reply.code(503).header('connection', 'close').header('cache-control', 'no-store').send(SHUTTING_DOWN);
      });

      app.addHook('onSend', (request, reply, payload, done) => {
        if (phase !== 'serving' && latest.get(request.raw.socket) === request.raw) reply.header('connection', 'close');
        done(null, payload);
      });

      let outcome: Promise<DrainOutcome> | undefined;
      const run = async (): Promise<DrainOutcome> => {
        phase = 'draining';
        app.log.info(
          { delayMs: options.delayMs, timeoutMs: options.timeoutMs, inFlight },
          'draining: /readyz answers 503; the listener closes after SHUTDOWN_DELAY_MS',
        );
        if (options.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, options.delayMs));
        phase = 'closed';
        app.log.info({ inFlight }, 'listener closing: idle connections closed, in-flight requests finishing');
        let cut = 0;
        const timers: NodeJS.Timeout[] = [];
        // Once requests are cut, the close hooks get a short while more: the upstream calls of the cut
        // requests may keep the pools busy until UPSTREAM_TIMEOUT_MS, for answers nobody waits for.
        const cutShort = new Promise<void>((resolve) => {
          timers.push(
            setTimeout(() => {
              cut = inFlight;
              server.closeAllConnections();
              if (cut === 0) return;
              app.log.error({ cut }, 'SHUTDOWN_TIMEOUT_MS over: cutting the requests still open');
              timers.push(setTimeout(resolve, CLOSE_AFTER_CUT_MS));
            }, options.timeoutMs),
          );
        });
        try {
          await Promise.race([app.close(), cutShort]);
        } finally {
          for (const timer of timers) clearTimeout(timer);
        }
        return { cut };
      };
      app.decorate('drain', () => {
        outcome ??= run();
        return outcome;
      });
    },
    { name: 'drain' },
  );

  return { plugin, draining: () => phase !== 'serving' };
}

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * Starts the graceful drain of CONTRACT.md "Operations" (see `pipeline/drain.ts`) and resolves once
     * the app is closed. Calling it again returns the same drain.
     *
     * @returns how many requests had to be cut when `SHUTDOWN_TIMEOUT_MS` ran out.
     * @throws whatever closing the app throws (an `onClose` hook's failure).
     */
    drain(): Promise<DrainOutcome>;
  }
}
