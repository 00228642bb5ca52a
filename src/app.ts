/**
 * `createServer(config?)`: builds the proxy app (Fastify) without listening — `server.ts` listens. It
 * only composes: Fastify with the options of the pipeline steps, then the steps in request order (one
 * module each in `pipeline/`, see `docs/architecture.md`), then the route tables. With no
 * `BFF_BASE_URL` the embedded sandbox is started first and serves every upstream.
 *
 * @module
 */
import type { Writable } from 'node:stream';
import multipart from '@fastify/multipart';
import Fastify, { type FastifyInstance } from 'fastify';
import { type Config, loadConfig, PACKAGE_VERSION, UPSTREAM_URL_VARIABLES, type UpstreamUrlVariable, withUpstreams } from './config.js';
import { authGate, sessionFromCookie } from './pipeline/auth-gate.js';
import { body, JSON_BODY_LIMIT } from './pipeline/body.js';
import { createClientErrors, SERVER_TIMEOUTS, type ServerTimeouts } from './pipeline/client-errors.js';
import { csrf } from './pipeline/csrf.js';
import { createDrain } from './pipeline/drain.js';
import { alwaysSucceeds } from './pipeline/always-succeeds.js';
import { errorRef } from './pipeline/error-ref.js';
import { errors } from './pipeline/errors.js';
import { createHealthListener, type HealthListener, health } from './pipeline/health.js';
import { loadShedding } from './pipeline/load-shedding.js';
import { createLogging, LOG_REDACT_PATHS } from './pipeline/logging.js';
import { metricsStep } from './pipeline/metrics.js';
import type { Metrics } from './pipeline/metrics-registry.js';
import { rateLimits } from './pipeline/rate-limit.js';
import { requestContext, requestIdOptions } from './pipeline/request-context.js';
import { sessionCookie } from './pipeline/session-cookie.js';
import type { PipelineStepName } from './pipeline/steps.js';
import { joinObservers, UpstreamContractChecks } from './pipeline/upstream-contract.js';
import { createTracing } from './pipeline/tracing.js';
import { allRouteTables } from './routes/index.js';
import { NO_METRICS } from './routes/context.js';
import { type AppDeps, activeRoutes, registerRoutes } from './routes/route.js';
import { trustedProxyCheck } from './session/client.js';
import { tokenKey } from './session/hash.js';
import { createSessionCaches } from './session/identity.js';
import { HANDSHAKE_CACHE_NAME, handshakesOf } from './session/sticker-handshakes.js';
import { createState } from './state/index.js';
import { LiveStreams } from './streams/index.js';
import { acceptUpgrades, WS_LIMITS } from './streams/websocket.js';
import { CIRCUIT_NAMES } from './upstream/endpoint-guard.js';
import { createUpstreamServices } from './upstream/services.js';

/** How long the drain waits for relayed WebSockets to answer their close, in milliseconds (at most `SHUTDOWN_TIMEOUT_MS`). */
const WS_CLOSE_GRACE_MS = WS_LIMITS.closeGraceMs;

/** Options of {@link createServer} beyond the configuration, for embedding and tests. */
export interface ServerOptions {
  /** Where log lines go (default: standard output). */
  logStream?: Writable;
  /** Random source for the beacon sampling (spec 6.2); default `Math.random`. */
  random?: () => number;
  /**
   * Server timeouts in milliseconds, each defaulting to {@link SERVER_TIMEOUTS}. Tests shorten them to see
   * slow clients cut off within seconds; production keeps the defaults.
   */
  timeouts?: Partial<ServerTimeouts>;
  /** Clock of the token keys' JWKS (its age, the time between fetches), in epoch milliseconds; default `Date.now`. */
  now?: () => number;
  /**
   * Time between the pings a relayed WebSocket sends each peer, in milliseconds; default
   * `WS_LIMITS.pingIntervalMs` (30 s). Tests shorten it to see a dead peer cut within seconds.
   */
  websocketPingIntervalMs?: number;
  /**
   * Steps the app is built without, **for measurement only** (the instruction bench's ledger,
   * bench/README.md "What each step costs"): what each leaves out is `PIPELINE_STEPS`
   * (`pipeline/steps.ts`). A proxy without a step is not a supported deployment; `server.ts` never
   * sets this. Default: none.
   */
  omitSteps?: ReadonlySet<PipelineStepName>;
}

/** No step left out: the app every deployment runs. */
const NO_STEP_OMITTED: ReadonlySet<PipelineStepName> = new Set();

/** Starts the embedded sandbox when the configuration asks for it, and points every upstream at it. */
async function withSandbox(
  config: Config,
): Promise<{ config: Config; urls?: Record<UpstreamUrlVariable, string>; close?: () => Promise<void> }> {
  if (!config.useSandbox) return { config };
  const { startSandbox } = await import('./sandbox/index.js');
  const sandbox = await startSandbox({ logger: false });
  return { config: withUpstreams(config, sandbox.env), urls: sandbox.env, close: () => sandbox.close() };
}

/**
 * Builds the proxy. With no `BFF_BASE_URL` it starts the embedded sandbox first and points every
 * upstream at it (closed with the app).
 *
 * @param config - a {@link Config}, or environment-like variables for {@link loadConfig}; default `{}`.
 * @returns the Fastify app, ready to `listen` or `inject`.
 * @throws ConfigError when `config` is a set of variables with invalid values.
 */
export async function createServer(
  config: Config | Record<string, string | undefined> = {},
  options: ServerOptions = {},
): Promise<FastifyInstance> {
  const loaded = 'upstreams' in config ? (config as Config) : loadConfig(config as Record<string, string | undefined>);
  const sandbox = await withSandbox(loaded);
  const cfg = sandbox.config;
  const omit = options.omitSteps ?? NO_STEP_OMITTED;
  const on = (step: PipelineStepName): boolean => !omit.has(step);
  const logging = on('logging') ? createLogging(cfg, options.logStream) : undefined;
  const clientErrors = createClientErrors(cfg.keepAliveTimeoutMs, options.timeouts);
  const drain = createDrain({ delayMs: cfg.shutdownDelayMs, timeoutMs: cfg.shutdownTimeoutMs });
  const tracing = await createTracing(cfg);
  const app = Fastify({
    ...(logging === undefined ? { logger: false } : logging.options),
    ...(on('request-context') ? requestIdOptions : {}),
    ...clientErrors.options,
    bodyLimit: JSON_BODY_LIMIT,
    // The client address: the socket's, or from a trusted load balancer the right-most untrusted one
    // of X-Forwarded-For (docs/behaviour.md "Rate limits and client address"); the peer's trust is
    // remembered by its address (session/client.ts).
    trustProxy: cfg.trustedProxies ? trustedProxyCheck(cfg.trustedProxies) : false,
    // A request arriving once the listener is closed gets the drain step's envelope, not Fastify's body.
    return503OnClosing: false,
    forceCloseConnections: 'idle',
    routerOptions: { ignoreTrailingSlash: false, ignoreDuplicateSlashes: false, caseSensitive: true, maxParamLength: 256 },
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false, useDefaults: true, allErrors: false } },
  });

  // MAX_CONNECTIONS: Node closes a connection over the bound as soon as it is accepted, before any byte is read.
  if (cfg.maxConnections > 0) app.server.maxConnections = cfg.maxConnections;

  // Metrics only with METRICS_PORT: otherwise no step, no observers, and the routes' reports do nothing.
  // prom-client is loaded only with METRICS_PORT (it would also load the OpenTelemetry API).
  const metrics =
    cfg.metricsPort === undefined || !on('metrics')
      ? undefined
      : new (await import('./pipeline/metrics-registry.js')).Metrics(
          { version: PACKAGE_VERSION, buildId: cfg.buildId },
          { limits: { maxInFlight: cfg.loadShedding.maxInFlight, maxConnections: cfg.maxConnections } },
        );
  clientErrors.onRefused = metrics?.refusedBeforeRouting;
  // Sampled checks of the BFF's answers against the shapes the proxy expects (UPSTREAM_CONTRACT_SAMPLE),
  // off the request's path: the observer only queues a sampled answer (docs/operations.md "Upstream contract checks").
  const contractChecks =
    cfg.upstreamContractSample > 0
      ? new UpstreamContractChecks({ sample: cfg.upstreamContractSample, log: app.log, report: metrics })
      : undefined;
  const upstreams = createUpstreamServices(on('upstream-guard') ? cfg : { ...cfg, upstreamLimits: undefined }, {
    observer: joinObservers(metrics?.observeUpstream, contractChecks?.observe),
    resilience: metrics?.resilience,
    // Circuit changes are logged at warn with the EP code (docs/behaviour.md "Resilience").
    tracer: tracing?.upstream,
    onCircuit: (endpoint, service, from, to) =>
      app.log.warn({ endpoint, service, from: CIRCUIT_NAMES[from], to: CIRCUIT_NAMES[to] }, `circuit ${CIRCUIT_NAMES[to]}: ${endpoint}`),
  });
  const state = await createState(cfg, app.log, { idempotencyDecision: metrics?.idempotencyDecision });
  metrics?.watchRedis(state.store);
  const sessions = createSessionCaches(
    (key) => state.fleet.announceEvict(key),
    metrics && ((result) => metrics.cacheRead('profile', result)),
  );
  // Live streams of the raw passthrough (docs/behaviour.md "Live streams"): ended on every instance
  // by a logout or a refused token (the fleet's channel), and between events by the drain.
  const streams = new LiveStreams({
    config: cfg,
    log: app.log,
    observer: metrics?.streams,
    random: options.random,
    pingIntervalMs: options.websocketPingIntervalMs,
  });
  state.fleet.onSessionEnd((key, reason) => streams.endSession(key, reason));
  const deps: AppDeps = {
    streams,
    config: cfg,
    services: upstreams.services,
    ...sessions,
    random: options.random ?? Math.random,
    caches: state.caches,
    state,
    metrics: metrics ?? NO_METRICS,
    ...(on('answer-json-check') && on('secret-scan')
      ? {}
      : { omitted: { answerJsonCheck: !on('answer-json-check'), secretScan: !on('secret-scan') } }),
  };
  deps.caches.set('profile', sessions.profileCache);
  state.fleet.onEvict('profile', (key) => sessions.profileCache.evictKey(key));
  state.fleet.onEvict(HANDSHAKE_CACHE_NAME, (key) => handshakesOf(state.caches).forgetKey(key));
  app.decorate('deps', deps);
  app.decorate('sandboxUrls', sandbox.urls);
  app.decorate('metrics', metrics);

  // The pipeline, in request order (docs/architecture.md). The metrics step goes first: it binds a
  // timing hook to every route declared after it.
  // A step left out (`omitSteps`, measurement only) is simply not registered.
  if (metrics) await app.register(metricsStep(metrics));
  if (logging) await app.register(logging.plugin);
  if (tracing) await app.register(tracing.plugin);
  await app.register(clientErrors.plugin);
  if (on('request-context')) await app.register(requestContext);
  if (on('drain')) await app.register(drain.plugin);
  else app.decorate('drain', async () => app.close().then(() => ({ cut: 0 })));
  if (on('load-shedding')) await app.register(loadShedding, { config: cfg, onShed: metrics?.loadShed, inFlight: metrics?.inFlight });
  if (on('csrf')) await app.register(csrf, { config: cfg });
  // Before the auth gate's cookie plugin: the session cookie must be asked for before that plugin's
  // own onSend hook writes the Set-Cookie header.
  if (on('session-cookie')) await app.register(sessionCookie);
  await app.register(on('auth-gate') ? authGate : sessionFromCookie, { config: cfg, now: options.now });
  if (on('body')) await app.register(body);
  if (on('rate-limits'))
    await app.register(rateLimits, { config: cfg, store: state.store, onRefused: metrics && ((limit) => metrics.rateLimited(limit)) });
  if (on('errors')) await app.register(errors, { services: upstreams.services });
  // After the error handler's answers, before X-Error-Ref (onSend hooks run in the order they were added).
  if (on('always-succeeds'))
    await app.register(alwaysSucceeds, { config: cfg, onSessionEnd: (token) => state.fleet.announceSessionEnd(tokenKey(token), 'logout') });
  if (on('error-ref')) await app.register(errorRef);
  // The API reference exists outside production only; its modules (the document builder, the
  // OpenAPI generator, the reference page) are not even loaded in production.
  if (!cfg.production) await app.register((await import('./pipeline/openapi.js')).openapi, { config: cfg });
  await app.register(health, { bff: upstreams.services.bff, draining: drain.draining, moneyMovesRefusal: () => state.idempotency.refusal });
  // HEALTH_PORT: the same two routes on a listener of their own, which server.ts starts beside the app's.
  app.decorate('healthListener', cfg.healthPort === undefined ? undefined : createHealthListener(app));

  // The route tables; upload rows get the multipart parser in their own scope only.
  const routes = activeRoutes(allRouteTables, cfg);
  const uploads = routes.filter((r) => r.contentTypes?.includes('multipart/form-data'));
  registerRoutes(
    app,
    routes.filter((r) => !uploads.includes(r)),
    deps,
  );
  await app.register(async (scope) => {
    await scope.register(multipart);
    registerRoutes(scope, uploads, deps);
  });

  // WebSocket upgrades go through the pipeline like any request; the passthrough upgrades them.
  acceptUpgrades(app.server, (req, res) => app.routing(req, res));
  // Before the listener closes: the streams end between events, so that no connection holds the drain.
  app.addHook('preClose', async () => streams.drain(Math.min(WS_CLOSE_GRACE_MS, cfg.shutdownTimeoutMs)));
  app.addHook('onClose', async () => {
    await streams.close();
    contractChecks?.close();
    await upstreams.close();
    await state.close();
    await sandbox.close?.();
  });
  return app;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Shared state of the routes (configuration, upstream services, caches). */
    deps: AppDeps;
    /** The sandbox's URLs when the embedded sandbox serves the upstreams, else `undefined`. */
    sandboxUrls: Partial<Record<UpstreamUrlVariable, string>> | undefined;
    /** The app's metrics (served by `server.ts` on `METRICS_PORT`); `undefined` without `METRICS_PORT`. */
    metrics: Metrics | undefined;
    /** The health listener of `HEALTH_PORT` (started by `server.ts` once the app listens); `undefined` without `HEALTH_PORT`. */
    healthListener: HealthListener | undefined;
  }
}

export { JSON_BODY_LIMIT, LOG_REDACT_PATHS, loadConfig, SERVER_TIMEOUTS, UPSTREAM_URL_VARIABLES };
export type { Config, Metrics, ServerTimeouts };
