/**
 * Pipeline step **load shedding** (docs/behaviour.md "Resilience", "Load shedding"; the SRE book's
 * "Handling Overload"): when the process is overloaded, a new `/api` request answers 503
 * `{ ok: false, error: "overloaded", detail }` with `Retry-After` at once — before its body is read,
 * its cookie checked or anything is called upstream — until the process recovers. Two thresholds,
 * either turned off with `0`:
 *
 * | threshold | variable | what is counted |
 * |---|---|---|
 * | event-loop delay | `LOAD_SHED_EVENT_LOOP_DELAY_MS` | mean delay over the last {@link SAMPLE_INTERVAL_MS} (`@fastify/under-pressure`, `perf_hooks`' histogram), from two samples after the listener opened (the start-up's own work is no overload) |
 * | requests in progress | `LOAD_SHED_MAX_IN_FLIGHT` | `/api` requests received and not yet answered or abandoned; a live stream no longer once it is open |
 *
 * What is an `/api` request is decided from the matched route, whatever form the request line takes
 * (`GET http://host/api/… HTTP/1.1` included). `/healthz`, `/readyz` (outside `/api`), the metrics
 * port (another server) and logout (`/api/auth/logout`, `/api/auth/logout-auto`: routes declared
 * `alwaysSucceeds`, spec 5.5) are never shed. A shed
 * request writes no log line of its own: one warn line at most every 10 s (an `AggregatedLine`) says
 * how many were shed since the last one, by reason (`in_flight`, `event_loop_delay`);
 * `load_shed_total` counts each.
 *
 * @module
 */
import type { ServerResponse } from 'node:http';
import underPressure from '@fastify/under-pressure';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { Config } from '../config.js';
import { envelope } from '../envelope.js';
import { LONG_LIVED_EVENT, liveKind } from '../streams/index.js';
import { AggregatedLine, skipCompletionLine } from './logging.js';
import { isApiRequest, routeConfigOf } from './request-context.js';

/** How often the event-loop delay is sampled, in milliseconds. */
export const SAMPLE_INTERVAL_MS = 250;

/** `Retry-After` of a shed request, in seconds. */
export const SHED_RETRY_AFTER_SECONDS = 1;

/** The body of a shed request, serialised once. */
const OVERLOADED_BODY = JSON.stringify(envelope('overloaded', 'The server is overloaded; try again shortly'));

/** The count of `/api` requests in flight, as load shedding counts them (read by `http_requests_in_flight`). */
export interface InFlightCount {
  value: number;
}

/** Options of {@link loadShedding}. */
export interface LoadSheddingOptions {
  config: Pick<Config, 'loadShedding'>;
  /** Told of each shed request (`load_shed_total`). */
  onShed?: (() => void) | undefined;
  /** Kept up to date with the requests in flight (the metrics' gauge), even when `LOAD_SHED_MAX_IN_FLIGHT` is 0. */
  inFlight?: InFlightCount | undefined;
}

/**
 * Whether a request may be shed (and counts in flight): an `/api` request by its matched route
 * (`isApiRequest`: absolute-form request targets included), except a route that always succeeds
 * (logout, spec 5.5: it always answers success and clears the cookie).
 */
function sheddable(request: FastifyRequest): boolean {
  return isApiRequest(request) && routeConfigOf(request).alwaysSucceeds !== true;
}

/** The step (see the module documentation). */
export const loadShedding = fp(
  async (app: FastifyInstance, { config, onShed, inFlight: count }: LoadSheddingOptions) => {
    const { eventLoopDelayMs, maxInFlight } = config.loadShedding;
    const shedLine = new AggregatedLine(app.log, 'load shedding: requests refused since the last line', 'shed');
    app.addHook('onClose', async () => shedLine.flush());
    /** Answers 503 `overloaded`; returns the body for `reply.send`. */
    const shed = (request: FastifyRequest, reply: FastifyReply, why: string): string => {
      skipCompletionLine(request);
      onShed?.();
      shedLine.count(why);
      reply.code(503).header('retry-after', String(SHED_RETRY_AFTER_SECONDS)).type('application/json; charset=utf-8');
      return OVERLOADED_BODY;
    };

    if (maxInFlight > 0 || count !== undefined) {
      const inFlight: InFlightCount = count ?? { value: 0 };
      const limit = maxInFlight > 0 ? maxInFlight : Number.POSITIVE_INFINITY;
      const done = (): void => {
        inFlight.value--;
      };
      // A live stream stops counting once it is open (docs/behaviour.md "Live streams", "Bounds").
      const open = function (this: ServerResponse): void {
        this.off('close', done);
        inFlight.value--;
      };
      app.addHook('onRequest', (request, reply, next) => {
        if (!sheddable(request)) return next();
        if (inFlight.value >= limit) {
          reply.send(shed(request, reply, 'in_flight'));
          return;
        }
        inFlight.value++;
        // A response emits 'close' once: `on` spares `once`'s wrapper per request and its removal.
        reply.raw.on('close', done);
        if (liveKind(request.headers) !== undefined) reply.raw.once(LONG_LIVED_EVENT, open);
        next();
      });
    }

    if (eventLoopDelayMs > 0) {
      // The samples taken while the process starts (modules, routes, the first compilations) read as a
      // long delay: the delay counts from two samples after the listener opened, so that a fresh
      // process never sheds its first requests.
      let countsFrom = Number.POSITIVE_INFINITY;
      app.addHook('onListen', (done) => {
        countsFrom = performance.now() + 2 * SAMPLE_INTERVAL_MS;
        done();
      });
      await app.register(underPressure, {
        maxEventLoopDelay: eventLoopDelayMs,
        sampleInterval: SAMPLE_INTERVAL_MS,
        // Without a send the request goes on (`/healthz`, `/readyz`); a sent reply ends it.
        pressureHandler: (request: FastifyRequest, reply: FastifyReply) => {
          if (sheddable(request) && performance.now() >= countsFrom) reply.send(shed(request, reply, 'event_loop_delay'));
        },
      });
    }
  },
  { name: 'load-shedding' },
);
