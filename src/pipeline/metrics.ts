/**
 * The metrics step (docs/behaviour.md "Operations"): times every answer into
 * `http_request_duration_seconds` of the app's registry (`metrics-registry.ts`), by the route's
 * pattern. Without `METRICS_PORT` it is not registered, and nothing of the metrics is built.
 *
 * @module
 */
import type { FastifyPluginCallback, FastifyReply, FastifyRequest, onResponseHookHandler } from 'fastify';
import fp from 'fastify-plugin';
import { isLiveStream, LIVE_ROUTE_PREFIX } from '../streams/index.js';
import type { Metrics } from './metrics-registry.js';

/** Hooks this module added to routes: a route declared twice (HEAD next to GET) is timed once. */
const TIMING_HOOKS = new WeakSet<onResponseHookHandler>();

/**
 * The pipeline step: an `onResponse` hook bound to each route's pattern as the route is declared
 * (a route declared after the step), except the health probes (`/healthz`, `/readyz` on either port:
 * route config `probe`); requests no route matched are labelled `not_found`. It also gives the
 * registry the public server whose connections `http_open_connections` counts. Register it before
 * the routes.
 */
export function metricsStep(metrics: Metrics): FastifyPluginCallback {
  return fp(
    (app, _options, done) => {
      metrics.watchServer(app.server);
      app.addHook('onRoute', (route) => {
        // Health probes are no traffic: an SLO read from this histogram must not count them.
        if (route.config?.probe === true) return;
        const existing = route.onResponse === undefined ? [] : Array.isArray(route.onResponse) ? route.onResponse : [route.onResponse];
        if (existing.some((hook) => TIMING_HOOKS.has(hook as onResponseHookHandler))) return;
        const cells = metrics.routeCells(route.url);
        const live = route.url.startsWith(LIVE_ROUTE_PREFIX);
        const hook: onResponseHookHandler = (request: FastifyRequest, reply: FastifyReply, next) => {
          // A live stream's time is its life, counted by stream_duration_seconds, not an answer's latency.
          if (live && isLiveStream(reply.raw)) return next();
          cells.observe(request.method, reply.statusCode, reply.elapsedTime);
          next();
        };
        TIMING_HOOKS.add(hook);
        route.onResponse = [hook, ...existing] as typeof route.onResponse;
      });
      const notFound = metrics.notFound;
      app.addHook('onResponse', (request, reply, next) => {
        if (request.is404) notFound.observe(request.method, reply.statusCode, reply.elapsedTime);
        next();
      });
      done();
    },
    { name: 'metrics' },
  );
}
