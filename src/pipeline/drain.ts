/**
 * Pipeline step **drain** (graceful shutdown; docs/behaviour.md "Operations", SIGTERM, and "Error envelope",
 * the `shutting_down` row). Its `onRequest` hook runs right after the request context's; its `onSend`
 * hook marks the last answer of a connection while draining.
 *
 * {@link createDrain} gives the plugin, which adds `app.drain()`, and the `draining` flag the health step
 * reads. The process entry point calls `app.drain()` on SIGTERM:
 *
 * 1. At once, `/readyz` answers 503 `shutting_down`; requests are still served normally, but the last
 *    answer on each connection says `Connection: close`, so clients and load balancers stop reusing
 *    connections to this process.
 * 2. After `SHUTDOWN_DELAY_MS` the listener closes (no new connection is accepted). A request that
 *    still arrives on a connection accepted before (a load balancer reused a kept-alive connection at
 *    that instant) is served as usual, its answer saying `Connection: close`; in-flight requests
 *    finish, each closing its connection when it is answered. Idle kept-alive connections stay open
 *    for {@link IDLE_GRACE_MS} (at most `SHUTDOWN_TIMEOUT_MS`), so that a balancer about to reuse one
 *    gets an answer rather than a reset, then are closed, and so is every connection left idle later.
 * 3. After `SHUTDOWN_TIMEOUT_MS` the remaining connections are destroyed, cutting the requests still
 *    open. `app.drain()` resolves once the app is closed (upstream pools included), or, when requests
 *    were cut, at most {@link CLOSE_AFTER_CUT_MS} later, telling how many requests were cut.
 *
 * The 503 `shutting_down` envelope, with `Connection: close` (never Fastify's own 503 body), remains
 * for what cannot be served: a request whose connection was accepted after the listener closed (a
 * connection handed over late, as a cluster worker may get one), or one that arrives once
 * `SHUTDOWN_TIMEOUT_MS` ran out.
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

/**
 * Where a drain is: `serving` before it starts, `draining` during `SHUTDOWN_DELAY_MS`, `closed` once the
 * listener is closed (requests on connections accepted before are served), `over` once
 * `SHUTDOWN_TIMEOUT_MS` ran out (connections destroyed, whatever still arrives answers 503).
 */
export type DrainPhase = 'serving' | 'draining' | 'closed' | 'over';

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

/**
 * Once the listener is closed, how long idle kept-alive connections stay open before they are closed,
 * in milliseconds (at most `SHUTDOWN_TIMEOUT_MS`). A balancer that sends on one of them meanwhile gets
 * its answer, with `Connection: close`; closing them at the very instant the listener closes would
 * reset the request of a balancer reusing one at that instant (a GET nginx sends again, a POST it does
 * not without `non_idempotent`). Long enough for a busy balancer to use up its cached connections, short
 * enough not to hold a rolling restart back.
 */
export const IDLE_GRACE_MS = 1_000;

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
      /** Connections accepted once the listener was closed: their requests answer 503. */
      const late = new WeakSet<Socket>();
      /** True from the listener's close until {@link IDLE_GRACE_MS} later: idle connections are kept open. */
      let holdIdle = false;
      /** True once idle connections are closed: a connection an answer leaves idle is closed too. */
      let sweeping = false;
      let sweepQueued = false;

      // Node's server.close() closes the idle connections at once; while holdIdle, it leaves them open
      // (the drain closes them when the idle grace ends, or all connections at SHUTDOWN_TIMEOUT_MS).
      const closeIdleNow = server.closeIdleConnections.bind(server);
      server.closeIdleConnections = () => {
        if (!holdIdle) closeIdleNow();
      };
      const sweepIdle = () => {
        if (sweepQueued) return;
        sweepQueued = true;
        setImmediate(() => {
          sweepQueued = false;
          server.closeIdleConnections();
        });
      };
      server.on('connection', (socket: Socket) => {
        if (phase !== 'serving' && !server.listening) late.add(socket);
      });
      // One listener for every response, made once: a response emits 'close' once (Node.js marks it
      // closed first), so `on` suffices, without `once`'s wrapper per response and its removal.
      const closed = (): void => {
        inFlight--;
        if (sweeping) sweepIdle();
      };
      // Before Fastify's own listener, so that the count and the latest request are known to its hooks.
      server.prependListener('request', (req: IncomingMessage, res) => {
        inFlight++;
        latest.set(req.socket, req);
        res.on('close', closed);
      });

      app.addHook('onRequest', (request, reply, done) => {
        if (phase !== 'over' && !late.has(request.raw.socket)) {
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
        holdIdle = true;
        const idleGraceMs = Math.min(IDLE_GRACE_MS, options.timeoutMs);
        app.log.info(
          { inFlight, idleGraceMs },
          'listener closing: requests on open connections served with Connection: close, idle connections closed after the idle grace',
        );
        let cut = 0;
        const timers: NodeJS.Timeout[] = [];
        timers.push(
          setTimeout(() => {
            holdIdle = false;
            sweeping = true;
            server.closeIdleConnections();
          }, idleGraceMs),
        );
        // Once requests are cut, the close hooks get a short while more: the upstream calls of the cut
        // requests may keep the pools busy until UPSTREAM_TIMEOUT_MS, for answers nobody waits for.
        const cutShort = new Promise<void>((resolve) => {
          timers.push(
            setTimeout(() => {
              phase = 'over';
              holdIdle = false;
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
     * Starts the graceful drain of docs/behaviour.md "Operations" (see `pipeline/drain.ts`) and resolves once
     * the app is closed. Calling it again returns the same drain.
     *
     * @returns how many requests had to be cut when `SHUTDOWN_TIMEOUT_MS` ran out.
     * @throws whatever closing the app throws (an `onClose` hook's failure).
     */
    drain(): Promise<DrainOutcome>;
  }
}
