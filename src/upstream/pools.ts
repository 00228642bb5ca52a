/**
 * The pool registry of the upstream services (docs/behaviour.md "Resilience", "Upstream answers"):
 * two undici `Pool`s per origin — a general one and one for {@link PRIORITY_ENDPOINTS} — shared by
 * every service on that origin, the guard of every endpoint (`endpoint-guard.ts`) and its client
 * shares (`client-shares.ts`), and what the calls over them share: their time limit, their size
 * limit, their observers.
 *
 * @module
 */
import { type Dispatcher, Pool } from 'undici';
import { answerFraming } from './answer-framing.js';
import type { UpstreamObserver, UpstreamTracer } from './call.js';
import { ClientShares } from './client-shares.js';
import { connectTimeoutMs } from './deadline.js';
import { decompression } from './decompression.js';
import { type CircuitListener, EndpointGuard, type GuardLimits, type ResilienceObserver } from './endpoint-guard.js';

/**
 * Largest upstream answer the proxy buffers by default, in bytes (4 MiB, `UPSTREAM_MAX_RESPONSE_BYTES`;
 * docs/behaviour.md "Upstream answers"): counted on the bytes received and again on the decoded bytes of a
 * coded answer; larger answers are `upstream_response_too_large`.
 */
export const MAX_UPSTREAM_RESPONSE_BYTES = 4 * 1024 * 1024;

/** Connections of an origin's general pool (every endpoint but {@link PRIORITY_ENDPOINTS}). */
export const POOL_CONNECTIONS = 128;

/**
 * Connections of an origin's pool for {@link PRIORITY_ENDPOINTS} (opened as needed): as many as the
 * general pool, so that a burst of logins or profile reads never waits in undici's queue.
 */
export const PRIORITY_POOL_CONNECTIONS = 128;

/**
 * The endpoints that must always find a connection (docs/behaviour.md "Resilience": money moves and the
 * session's own calls), by EP code (spec 7.2): they go over a pool of their own per origin.
 */
export const PRIORITY_ENDPOINTS: ReadonlySet<string> = new Set([
  'EP0001', // POST /auth/login
  'EP0002', // POST /auth/logout
  'EP0003', // GET /auth/user-profile
  'EP0004', // POST /users/refresh-token
  'EP0012', // POST /auth/logout-auto
  'EP0015', // POST /bff/social/{provider}
  'EP0091', // POST /wallet/add-credit (deposit)
  'EP0093', // POST /new-withdraws (withdraw)
]);

/** What the pools and guards of every service share: limits, observers. */
export interface PoolOptions {
  /** The limits of each endpoint's guard; `undefined`: no guard (tests of the bare client). */
  readonly limits?: GuardLimits | undefined;
  /** Told of every upstream call (the metrics of docs/behaviour.md "Operations", the contract checks); omit it when nothing observes. */
  readonly observer?: UpstreamObserver | undefined;
  /** Told of the endpoint guards' events (in flight, refusals, circuit states, retries: the metrics). */
  readonly resilience?: ResilienceObserver | undefined;
  /** Told of every circuit change (the warn log line of docs/behaviour.md "Resilience"). */
  readonly onCircuit?: CircuitListener | undefined;
  /** Traces every upstream call (tracing on: the tracing step's `upstream`); omit it when tracing is off (no cost). */
  readonly tracer?: UpstreamTracer | undefined;
  /**
   * Largest answer buffered or streamed, in bytes, counted on the received and on the decoded bytes
   * (`UPSTREAM_MAX_RESPONSE_BYTES`); default {@link MAX_UPSTREAM_RESPONSE_BYTES}.
   */
  readonly maxResponseBytes?: number | undefined;
}

/** See the module documentation. */
export class PoolRegistry {
  readonly #pools = new Map<string, Dispatcher>();
  /** One call's total time limit (`UPSTREAM_TIMEOUT_MS`), in milliseconds: its deadline is this after its slot (`deadline.ts`). */
  readonly timeoutMs: number;
  /** Told of every call of the services over these pools; `undefined`: nothing observed (no cost). */
  readonly observer: UpstreamObserver | undefined;
  /** Traces every call of the services over these pools; `undefined`: tracing off (no cost). */
  readonly tracer: UpstreamTracer | undefined;
  /** Largest answer accepted, in bytes (received and decoded; `UPSTREAM_MAX_RESPONSE_BYTES`). */
  readonly maxResponseBytes: number;
  readonly #options: PoolOptions;
  readonly #guards = new Map<string, EndpointGuard>();
  readonly #shares = new Map<string, ClientShares>();

  /**
   * @param timeoutMs - total limit of one call (`UPSTREAM_TIMEOUT_MS`), in milliseconds.
   * @param options - guard limits and observers.
   */
  constructor(timeoutMs: number, options: PoolOptions = {}) {
    this.timeoutMs = timeoutMs;
    this.#options = options;
    this.observer = options.observer;
    this.tracer = options.tracer;
    this.maxResponseBytes = options.maxResponseBytes ?? MAX_UPSTREAM_RESPONSE_BYTES;
  }

  /** The guard of one endpoint of one service, created on first use; `undefined` without limits. */
  guard(service: string, endpoint: string): EndpointGuard | undefined {
    const limits = this.#options.limits;
    if (limits === undefined) return undefined;
    const key = `${service} ${endpoint}`;
    let guard = this.#guards.get(key);
    if (guard === undefined) {
      guard = new EndpointGuard(endpoint, service, limits, this.#options.resilience, this.#options.onCircuit);
      this.#guards.set(key, guard);
    }
    return guard;
  }

  /**
   * The fair shares of one endpoint's guard for calls of named clients (`UpstreamRequest.client`),
   * created on first use over the endpoint's own guard; `undefined` without limits.
   */
  shares(service: string, endpoint: string): ClientShares | undefined {
    const shared = this.guard(service, endpoint);
    if (shared === undefined) return undefined;
    const key = `${service} ${endpoint}`;
    let shares = this.#shares.get(key);
    if (shares === undefined) {
      shares = new ClientShares(shared, this.#options.limits as GuardLimits, this.#options.resilience);
      this.#shares.set(key, shares);
    }
    return shares;
  }

  /** Every guard made so far (tests, diagnostics). */
  get guards(): readonly EndpointGuard[] {
    return [...this.#guards.values()];
  }

  /**
   * The pool for an origin such as `https://bff.example.com`, created on first use; `priority`: the
   * pool of {@link PRIORITY_ENDPOINTS}. Its answers are decoded before anyone reads them (docs/behaviour.md
   * "Upstream answers", docs/architecture.md "Habits" (habit 16)): undici's decompression interceptor decodes `gzip`,
   * `deflate`, `br` (and `zstd` where the runtime has it), whatever the status, and stops a decoded
   * body at {@link maxResponseBytes} (`upstream_response_too_large`, decoded no further); the pool
   * itself stops the received bytes at the same size. A coding it does not know stays in
   * `Content-Encoding`, and the calls refuse such an answer. Before the decoding, interim 1xx answers
   * are dropped and an answer without content loses its coding (`answer-framing.ts`). The socket limits
   * (`headersTimeout`, `bodyTimeout`) are each dispatch's own, from its call's deadline.
   */
  get(origin: string, priority = false): Dispatcher {
    const key = priority ? `${origin} priority` : origin;
    let pool = this.#pools.get(key);
    if (!pool) {
      const limit = this.maxResponseBytes;
      pool = new Pool(origin, {
        connections: priority ? PRIORITY_POOL_CONNECTIONS : POOL_CONNECTIONS,
        pipelining: 1,
        keepAliveTimeout: 4_000,
        keepAliveMaxTimeout: 60_000,
        connectTimeout: connectTimeoutMs(this.timeoutMs),
        maxResponseSize: limit,
      }).compose(answerFraming(), decompression(limit));
      this.#pools.set(key, pool);
    }
    return pool;
  }

  /** Closes every pool (graceful shutdown: in-flight calls finish first). */
  async close(): Promise<void> {
    const pools = [...this.#pools.values()];
    this.#pools.clear();
    await Promise.all(pools.map((p) => p.close().catch(() => p.destroy())));
  }
}
