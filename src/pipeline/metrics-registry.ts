/**
 * The registry of the proxy's Prometheus series (docs/behaviour.md "Operations"; docs/architecture.md
 * "Habits" (habit 13)): one prom-client registry per app, every name prefixed with
 * {@link METRIC_PREFIX}, the label children made once per label set, and the observers the lower
 * layers and the pipeline steps are given. The timing step is `metrics.ts`, the `/metrics` server
 * and the cluster aggregation `metrics-server.ts`.
 *
 * Labels come from closed sets only (route patterns, EP and EM codes, cache and limit names,
 * decisions, refusal reasons, status codes and classes): raw paths and bodies reach this module (an
 * upstream error's body, for its EM code) but never a label. On the hot path nothing is formatted per
 * request: children are kept in nested maps keyed by values the request already has (route pattern,
 * method, status number, EP code). The two per-endpoint gauges (`upstream_in_flight`,
 * `circuit_state`) are plain numbers in one record per EP code, copied into prom-client when a scrape
 * reads them.
 *
 * @module
 */
import type { Server } from 'node:http';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { CONTRACT_FINDING_KIND_NAMES, type ContractFindingKind } from '../contracts/conformance.js';
import { classifyError, type EndpointCode, isEndpointCode, UNKNOWN_ENDPOINT_CODE } from '../errors/index.js';
import type { CacheResult } from '../state/caches.js';
import type { IdempotencyDecision } from '../state/idempotency.js';
import type { SharedStore } from '../state/store.js';
import { END_REASONS, STREAM_KINDS, type StreamObserver } from '../streams/index.js';
import type { UpstreamCallRecord } from '../upstream/client.js';
import type { CircuitState, ResilienceObserver } from '../upstream/endpoint-guard.js';
import type { RefusalReason } from './client-errors.js';
import { CellHistogram } from './histogram-cells.js';
import type { InFlightCount } from './load-shedding.js';
import type { MetricsSource } from './metrics-server.js';

/**
 * The prefix of every metric name (docs/behaviour.md "Operations": `http_request_duration_seconds` is served
 * as `front_proxy_http_request_duration_seconds`), prom-client's process and Node.js metrics included:
 * no name collides with an exporter's (`redis_up` is also redis_exporter's).
 */
export const METRIC_PREFIX = 'front_proxy_';
/** Histogram buckets of both durations, in seconds: 5 ms to 10 s. */
export const DURATION_BUCKETS: readonly number[] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** Buckets of `stream_duration_seconds`, in seconds: a second to a day (`STREAM_MAX_LIFETIME_MS` is 15 min by default). */
export const STREAM_DURATION_BUCKETS: readonly number[] = [1, 10, 60, 300, 900, 1_800, 3_600, 21_600, 86_400];
/** The `route` label of a request no route matched. */
export const NOT_FOUND_ROUTE = 'not_found';
/** The `status_class` label of an upstream call that ended without an answer. */
export const TRANSPORT_ERROR_CLASS = 'error';

/** `status_class` by hundreds (index 0: no answer). */
const STATUS_CLASSES = [TRANSPORT_ERROR_CLASS, '1xx', '2xx', '3xx', '4xx', '5xx'] as const;
/** Most bytes of an upstream error body read for its reason (the classifier scans 8 KiB of a reason). */
const ERROR_BODY_BYTES = 64 * 1024;

type HttpLabels = 'method' | 'route' | 'status_code';
type Child = { observe(value: number): void };
type Count = { inc(): void };

/** Why the per-endpoint guard refused a call before sending it (`upstream_rejected_total` `reason`). */
type RejectReason = Parameters<ResilienceObserver['rejected']>[1];

/** The resilience series of one EP code: the gauges as plain numbers (read at scrape), the counters' children. */
interface GuardCells {
  /** `upstream_in_flight`: calls running upstream now. */
  inFlight: number;
  /** `circuit_state`: 0 closed (the guard's start), 1 open, 2 half-open. */
  state: CircuitState;
  readonly rejected: Readonly<Record<RejectReason, Count>>;
  readonly retries: Count;
}

/** A map entry, made on first use. */
function entry<K, V>(map: Map<K, V>, key: K, make: () => V): V {
  let value = map.get(key);
  if (value === undefined) {
    value = make();
    map.set(key, value);
  }
  return value;
}

/** The `http_request_duration_seconds` children of one route pattern, by method and status. */
export class RouteCells {
  readonly #histogram: CellHistogram<HttpLabels>;
  readonly #route: string;
  readonly #cells = new Map<string, Map<number, Child>>();
  constructor(histogram: CellHistogram<HttpLabels>, route: string) {
    this.#histogram = histogram;
    this.#route = route;
  }
  /** One answer, `ms` milliseconds after the request arrived. */
  observe(method: string, status: number, ms: number): void {
    let byStatus = this.#cells.get(method);
    if (byStatus === undefined) {
      byStatus = new Map();
      this.#cells.set(method, byStatus);
    }
    let child = byStatus.get(status);
    if (child === undefined) {
      child = this.#histogram.labels({ method, route: this.#route, status_code: String(status) });
      byStatus.set(status, child);
    }
    child.observe(ms / 1000);
  }
}

/** The serving limits exported beside their gauges (0: off). */
export interface ServingLimits {
  /** `LOAD_SHED_MAX_IN_FLIGHT`. */
  readonly maxInFlight: number;
  /** `MAX_CONNECTIONS`. */
  readonly maxConnections: number;
}

/** Every {@link RefusalReason}, so that each series starts at 0. */
const REFUSAL_REASONS: readonly RefusalReason[] = ['malformed', 'headers_too_large', 'timeout', 'path', 'protocol', 'max_connections'];

/** The versions `build_info` reports. */
export interface BuildInfo {
  /** The package version. */
  readonly version: string;
  /** `BUILD_ID` (the package version when unset). */
  readonly buildId: string;
}

/** The metrics of one app (see the module documentation). */
export class Metrics implements MetricsSource {
  /** The app's registry: the contract's series and prom-client's default process and Node.js metrics. */
  readonly registry: Registry;
  readonly #http: CellHistogram<HttpLabels>;
  readonly #upstream: CellHistogram<'endpoint' | 'method' | 'status_class'>;
  readonly #upstreamErrors: Counter<'endpoint' | 'error'>;
  readonly #cache: Counter<'cache' | 'result'>;
  readonly #rateLimited: Counter<'limit'>;
  readonly #idempotency: Counter<'decision'>;
  /** The `http_request_duration_seconds` children of the requests no route matched ({@link NOT_FOUND_ROUTE}). */
  readonly notFound: RouteCells;
  readonly #upstreamCells = new Map<EndpointCode, Map<string, (Child | undefined)[]>>();
  readonly #errorCells = new Map<EndpointCode, Map<string, Count>>();
  readonly #cacheCells = new Map<string, Record<CacheResult, Count>>();
  readonly #limitCells = new Map<string, Count>();
  readonly #decisionCells = new Map<IdempotencyDecision, Count>();
  readonly #rejected: Counter<'endpoint' | 'reason'>;
  readonly #retries: Counter<'endpoint'>;
  readonly #loadShed: Counter;
  readonly #contractChecks: Counter<'endpoint'>;
  readonly #contractFindings: Counter<'endpoint' | 'kind'>;
  /** The contract-check counters of each EP code checked: its checks, and its findings by kind. */
  readonly #contractCells = new Map<EndpointCode, { checks: Count; findings: Readonly<Record<ContractFindingKind, Count>> }>();
  /** The resilience series per EP code (at most one record per code of the registry). */
  readonly #guardCells = new Map<string, GuardCells>();
  readonly #refused: Counter<'reason'>;
  readonly #refusedCells = new Map<RefusalReason, Count>();
  /** The public server whose connections `http_open_connections` counts ({@link watchServer}). */
  #server: Server | undefined;
  /** The `/api` requests in flight, kept by the load-shedding step (`http_requests_in_flight`). */
  readonly inFlight: InFlightCount = { value: 0 };

  /** The live streams' observer (`streams_open`, `streams_ended_total`, `stream_duration_seconds`; docs/behaviour.md "Live streams"). */
  readonly streams: StreamObserver;

  /**
   * @param build - the versions of `build_info`.
   * @param options.defaultMetrics - collect prom-client's process and Node.js metrics (default true).
   */
  constructor(build: BuildInfo, options: { defaultMetrics?: boolean; limits?: Partial<ServingLimits> } = {}) {
    const limits: ServingLimits = { maxInFlight: 0, maxConnections: 0, ...options.limits };
    const registry = new Registry();
    this.registry = registry;
    const registers = [registry];
    const buckets = [...DURATION_BUCKETS];
    this.#http = new CellHistogram({
      name: `${METRIC_PREFIX}http_request_duration_seconds`,
      help: 'Time from the request to its answer, in seconds, by method, route pattern and status code.',
      labelNames: ['method', 'route', 'status_code'],
      buckets,
      registers,
    });
    this.#upstream = new CellHistogram({
      name: `${METRIC_PREFIX}upstream_request_duration_seconds`,
      help: 'Time of one upstream call (to its whole answer; to the headers of a streamed one), in seconds, by EP code, method and status class.',
      labelNames: ['endpoint', 'method', 'status_class'],
      buckets,
      registers,
    });
    this.#upstreamErrors = new Counter({
      name: `${METRIC_PREFIX}upstream_errors_total`,
      help: 'Upstream calls answered outside 2xx or failed without an answer, by EP code and EM code (as classifyError gives them).',
      labelNames: ['endpoint', 'error'],
      registers,
    });
    this.#cache = new Counter({
      name: `${METRIC_PREFIX}cache_requests_total`,
      help: 'Cache reads by cache name and result (hit, miss, stale).',
      labelNames: ['cache', 'result'],
      registers,
    });
    this.#rateLimited = new Counter({
      name: `${METRIC_PREFIX}rate_limited_total`,
      help: 'Requests refused by a rate limit, by limit name.',
      labelNames: ['limit'],
      registers,
    });
    this.#idempotency = new Counter({
      name: `${METRIC_PREFIX}idempotency_decisions_total`,
      help: 'Money-move submissions by idempotency decision.',
      labelNames: ['decision'],
      registers,
    });
    const info = new Gauge({
      name: `${METRIC_PREFIX}build_info`,
      help: 'Always 1; the labels name the running build.',
      labelNames: ['version', 'build_id'],
      registers,
      aggregator: 'first',
    });
    info.set({ version: build.version, build_id: build.buildId }, 1);
    const guardCells = this.#guardCells;
    new Gauge({
      name: `${METRIC_PREFIX}upstream_in_flight`,
      help: 'Upstream calls running now, by EP code (across cluster workers: the sum).',
      labelNames: ['endpoint'],
      registers,
      aggregator: 'sum',
      collect() {
        for (const [endpoint, cells] of guardCells) this.set({ endpoint }, cells.inFlight);
      },
    });
    new Gauge({
      name: `${METRIC_PREFIX}circuit_state`,
      help: 'Circuit breaker state by EP code: 0 closed, 1 open, 2 half-open (across cluster workers: the highest).',
      labelNames: ['endpoint'],
      registers,
      aggregator: 'max',
      collect() {
        for (const [endpoint, cells] of guardCells) this.set({ endpoint }, cells.state);
      },
    });
    this.#rejected = new Counter({
      name: `${METRIC_PREFIX}upstream_rejected_total`,
      help: 'Upstream calls refused before they were sent, by EP code and reason (busy: the endpoint limit and its queue are full; circuit_open: its circuit is open).',
      labelNames: ['endpoint', 'reason'],
      registers,
    });
    this.#retries = new Counter({
      name: `${METRIC_PREFIX}upstream_retries_total`,
      help: 'Reads sent upstream a second time after their connection failed before any answer byte, by EP code.',
      labelNames: ['endpoint'],
      registers,
    });
    this.#loadShed = new Counter({
      name: `${METRIC_PREFIX}load_shed_total`,
      help: 'API requests answered 503 overloaded because the process was overloaded.',
      registers,
    });
    this.#contractChecks = new Counter({
      name: `${METRIC_PREFIX}upstream_contract_checks_total`,
      help: 'BFF 2xx answers checked against the shapes the proxy expects (a sample, UPSTREAM_CONTRACT_SAMPLE), by EP code.',
      labelNames: ['endpoint'],
      registers,
    });
    this.#contractFindings = new Counter({
      name: `${METRIC_PREFIX}upstream_contract_findings_total`,
      help: 'BFF answers checked that had at least one finding of a kind (missing, type, enum, extra, not_json), by EP code and kind; extra is never an error.',
      labelNames: ['endpoint', 'kind'],
      registers,
    });
    const streamsOpen = new Gauge({
      name: `${METRIC_PREFIX}streams_open`,
      help: "Live streams open now, by kind (sse, websocket: a browser's; feed: a shared feed's upstream stream).",
      labelNames: ['kind'],
      registers,
      aggregator: 'sum',
    });
    const streamsEnded = new Counter({
      name: `${METRIC_PREFIX}streams_ended_total`,
      help: 'Live streams ended, by kind and reason (client, upstream, idle, lifetime, session, drain, slow_consumer, refused).',
      labelNames: ['kind', 'reason'],
      registers,
    });
    const streamDuration = new Histogram({
      name: `${METRIC_PREFIX}stream_duration_seconds`,
      help: 'How long a live stream was open, in seconds, by kind (refused streams are not observed).',
      labelNames: ['kind'],
      buckets: [...STREAM_DURATION_BUCKETS],
      registers,
    });
    for (const kind of STREAM_KINDS) {
      streamsOpen.set({ kind }, 0);
      for (const reason of END_REASONS) streamsEnded.inc({ kind, reason }, 0);
    }
    this.streams = {
      opened: (kind) => streamsOpen.inc({ kind }),
      ended: (kind, reason, seconds) => {
        streamsEnded.inc({ kind, reason });
        if (reason === 'refused') return;
        streamsOpen.dec({ kind });
        streamDuration.observe({ kind }, seconds);
      },
    };
    this.#refused = new Counter({
      name: `${METRIC_PREFIX}http_refused_total`,
      help: 'Requests and connections refused before routing, by reason (malformed, headers_too_large, timeout, path, protocol, max_connections).',
      labelNames: ['reason'],
      registers,
    });
    for (const reason of REFUSAL_REASONS) this.#refused.inc({ reason }, 0);
    const inFlight = this.inFlight;
    new Gauge({
      name: `${METRIC_PREFIX}http_requests_in_flight`,
      help: 'API requests received and not yet answered, as load shedding counts them (its limit: http_requests_in_flight_limit).',
      registers,
      aggregator: 'sum',
      collect() {
        this.set(inFlight.value);
      },
    });
    new Gauge({
      name: `${METRIC_PREFIX}http_requests_in_flight_limit`,
      help: 'LOAD_SHED_MAX_IN_FLIGHT: API requests in flight over which new ones are shed (0: no limit).',
      registers,
      aggregator: 'sum',
    }).set(limits.maxInFlight);
    const server = (): Server | undefined => this.#server;
    new Gauge({
      name: `${METRIC_PREFIX}http_open_connections`,
      help: 'Client connections open on the public port (its limit: http_open_connections_limit).',
      registers,
      aggregator: 'sum',
      async collect() {
        const listening = server();
        if (listening === undefined) return;
        this.set(await new Promise<number>((resolve) => listening.getConnections((error, n) => resolve(error ? 0 : n))));
      },
    });
    new Gauge({
      name: `${METRIC_PREFIX}http_open_connections_limit`,
      help: 'MAX_CONNECTIONS: client connections over which new ones are closed at accept (0: no limit).',
      registers,
      aggregator: 'sum',
    }).set(limits.maxConnections);
    if (options.defaultMetrics !== false) {
      collectDefaultMetrics({ register: registry, prefix: METRIC_PREFIX });
      // prom-client's three totals of active handles, requests and resources are gauges named `_total`,
      // which `promtool check metrics` refuses: their sums are `sum(front_proxy_nodejs_active_handles)`
      // and so on, from the per-type gauges beside them.
      for (const name of ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total']) {
        registry.removeSingleMetric(`${METRIC_PREFIX}${name}`);
      }
    }
    this.notFound = new RouteCells(this.#http, NOT_FOUND_ROUTE);
  }

  /** The `http_request_duration_seconds` children of the route pattern `route` (the timing step binds one per route). */
  routeCells(route: string): RouteCells {
    return new RouteCells(this.#http, route);
  }

  /** Counts the open connections of `server`, the public one, in `http_open_connections` (read at each scrape). */
  watchServer(server: Server): void {
    this.#server = server;
  }

  /**
   * The upstream observer (`createUpstreamServices`): one observation of
   * `upstream_request_duration_seconds`, and for an answer outside 2xx or a failure one
   * `upstream_errors_total` with the EP and EM codes `classifyError` gives for it (a failure without
   * an answer is status 0 there: EM0042). The EP code is the one of the dispatched path (base URL
   * path prefix and call path, no query) and method.
   */
  readonly observeUpstream = (call: UpstreamCallRecord): void => {
    const endpoint = call.endpoint;
    const status = call.status;
    const index = call.error !== undefined || status < 100 || status > 599 ? 0 : Math.floor(status / 100);
    const byMethod = entry(this.#upstreamCells, endpoint, () => new Map<string, (Child | undefined)[]>());
    const cells = entry(byMethod, call.method, () => new Array<Child | undefined>(STATUS_CLASSES.length));
    let child = cells[index];
    if (child === undefined) {
      child = this.#upstream.labels({ endpoint, method: call.method, status_class: STATUS_CLASSES[index] as string });
      cells[index] = child;
    }
    child.observe(call.seconds);
    if (index !== 2) this.#upstreamError(call, endpoint);
  };

  /** One read of the cache `cache` (`cache_requests_total`). */
  cacheRead(cache: string, result: CacheResult): void {
    const cells = entry(this.#cacheCells, cache, () => ({
      hit: this.#cache.labels({ cache, result: 'hit' }),
      miss: this.#cache.labels({ cache, result: 'miss' }),
      stale: this.#cache.labels({ cache, result: 'stale' }),
    }));
    cells[result].inc();
  }

  /** One request refused by the rate limit `limit` (`rate_limited_total`); `limit` is a fixed name. */
  rateLimited(limit: string): void {
    entry(this.#limitCells, limit, () => this.#rateLimited.labels({ limit })).inc();
  }

  /** One money-move decision (`idempotency_decisions_total`); the state's `onDecision`. */
  readonly idempotencyDecision = (decision: IdempotencyDecision): void => {
    entry(this.#decisionCells, decision, () => this.#idempotency.labels({ decision })).inc();
  };

  /**
   * The per-endpoint guard's observer (docs/behaviour.md "Resilience", "Operations"), handed to the
   * upstream layer: `upstream_in_flight` {`endpoint`} (gauge, calls), `upstream_rejected_total`
   * {`endpoint`, `reason`}, `circuit_state` {`endpoint`} (gauge: 0 closed, 1 open, 2 half-open) and
   * `upstream_retries_total` {`endpoint`}. Each method is bound (it may be passed alone); after the
   * first report of an EP code a report is a map lookup and an addition. `endpoint` must be an EP
   * code: anything else is counted as `EP0000`, so no path ever becomes a label. Once an EP code has
   * been reported both gauges show it (`circuit_state` 0 until a state is reported) and its counters
   * start at 0. Across cluster workers `upstream_in_flight` and the counters are summed and
   * `circuit_state` is the highest value: a circuit that is not closed in some worker reads 1 or 2,
   * never 0.
   */
  readonly resilience: ResilienceObserver = Object.freeze({
    inFlight: (endpoint: string, delta: 1 | -1): void => {
      this.#guard(endpoint).inFlight += delta;
    },
    rejected: (endpoint: string, reason: RejectReason): void => {
      this.#guard(endpoint).rejected[reason]?.inc();
    },
    circuitState: (endpoint: string, state: CircuitState): void => {
      if (state === 0 || state === 1 || state === 2) this.#guard(endpoint).state = state;
    },
    retried: (endpoint: string): void => {
      this.#guard(endpoint).retries.inc();
    },
  });

  /** One request or connection refused before routing (`http_refused_total` {`reason`}). Bound. */
  readonly refusedBeforeRouting = (reason: RefusalReason): void => {
    entry(this.#refusedCells, reason, () => this.#refused.labels({ reason })).inc();
  };

  /**
   * One `/api` request answered 503 `overloaded` by load shedding (`load_shed_total`, no labels;
   * docs/behaviour.md "Resilience"). Bound: it may be passed alone.
   */
  readonly loadShed = (): void => {
    this.#loadShed.inc();
  };

  /**
   * One BFF answer of `endpoint` checked by the live contract checks (`upstream_contract_checks_total`;
   * docs/behaviour.md "Operations"). On a code's first check its finding counters start at 0 for
   * every kind, so that `increase()` sees the first finding. An unknown code counts as `EP0000`.
   */
  contractChecked(endpoint: EndpointCode): void {
    this.#contract(endpoint).checks.inc();
  }

  /** One checked answer of `endpoint` with at least one finding of `kind` (`upstream_contract_findings_total`). */
  contractFinding(endpoint: EndpointCode, kind: ContractFindingKind): void {
    this.#contract(endpoint).findings[kind]?.inc();
  }

  #contract(endpoint: EndpointCode): { checks: Count; findings: Readonly<Record<ContractFindingKind, Count>> } {
    const code = isEndpointCode(endpoint) ? endpoint : UNKNOWN_ENDPOINT_CODE;
    return entry(this.#contractCells, code, () => {
      const findings = {} as Record<ContractFindingKind, Count>;
      for (const kind of CONTRACT_FINDING_KIND_NAMES) {
        findings[kind] = this.#contractFindings.labels({ endpoint: code, kind });
        this.#contractFindings.inc({ endpoint: code, kind }, 0);
      }
      return { checks: this.#contractChecks.labels({ endpoint: code }), findings };
    });
  }

  /**
   * Exports `redis_up` (1 while the store reaches Redis, else 0; read at each scrape) when the store
   * is Redis. The in-memory store (no `REDIS_URL`) has no Redis to watch: the series is then absent.
   * Across cluster workers the lowest value is kept.
   */
  watchRedis(store: Pick<SharedStore, 'kind' | 'up'>): void {
    if (store.kind !== 'redis') return;
    new Gauge({
      name: `${METRIC_PREFIX}redis_up`,
      help: '1 while the Redis primary (REDIS_URL, REDIS_SENTINELS or REDIS_CLUSTER_NODES) can be reached, else 0.',
      registers: [this.registry],
      aggregator: 'min',
      collect() {
        this.set(store.up ? 1 : 0);
      },
    });
  }

  /** The exposition text of this app's registry. */
  metrics(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /** The resilience cells of `endpoint`, made on its first report (an unknown code counts as EP0000). */
  #guard(endpoint: string): GuardCells {
    let cells = this.#guardCells.get(endpoint);
    if (cells === undefined) {
      const code = isEndpointCode(endpoint) ? endpoint : UNKNOWN_ENDPOINT_CODE;
      cells = this.#guardCells.get(code);
      if (cells === undefined) {
        cells = {
          inFlight: 0,
          state: 0,
          rejected: {
            busy: this.#rejected.labels({ endpoint: code, reason: 'busy' }),
            circuit_open: this.#rejected.labels({ endpoint: code, reason: 'circuit_open' }),
          },
          retries: this.#retries.labels({ endpoint: code }),
        };
        this.#guardCells.set(code, cells);
        // The counters of a code start at 0, so that rate() and increase() see its first refusal or retry.
        this.#rejected.inc({ endpoint: code, reason: 'busy' }, 0);
        this.#rejected.inc({ endpoint: code, reason: 'circuit_open' }, 0);
        this.#retries.inc({ endpoint: code }, 0);
      }
    }
    return cells;
  }

  #upstreamError(call: UpstreamCallRecord, endpoint: EndpointCode): void {
    const body = call.body;
    const rawBody = body === undefined || body.length === 0 ? undefined : body.toString('utf8', 0, Math.min(body.length, ERROR_BODY_BYTES));
    const { errorCode } = classifyError({ status: call.status, rawBody, url: `${call.prefix}${call.path}`, method: call.method });
    const byError = entry(this.#errorCells, endpoint, () => new Map<string, Count>());
    entry(byError, errorCode, () => this.#upstreamErrors.labels({ endpoint, error: errorCode })).inc();
  }
}
