/**
 * Fair shares of an endpoint's guard for calls whose target a client chooses (the raw passthrough:
 * docs/behaviour.md "Resilience", "Calls a client chooses"). Such a call passes two guards
 * (`endpoint-guard.ts`):
 *
 * 1. **its client's own guard** — a bulkhead of {@link clientLimits} (a quarter of the endpoint's slots
 *    and queue) and a circuit breaker of the endpoint's thresholds — so that one client can hold only
 *    its share of the endpoint, and the failures it provokes (a path that answers 503, a query that
 *    times out) open its own circuit, no one else's;
 * 2. **the endpoint's shared guard**, which bounds every client together. Its circuit counts one
 *    failure per client in a row: it opens only once `circuitFailures` different clients failed in
 *    a row with no answer in between — an endpoint that fails for everyone — and a client whose own
 *    circuit is not closed never sends the shared circuit's trial.
 *
 * Clients are named by the caller (a verified session's key, else the client address, IPv6 by its
 * /64). Their guards live in a bounded table ({@link MAX_CLIENTS}, least recently used forgotten first).
 *
 * @module
 */
import { LRUCache } from 'lru-cache';
import type { Cancellation } from './call.js';
import { type CallOutcome, CIRCUIT, EndpointGuard, type GuardLimits, type ResilienceObserver, type Ticket } from './endpoint-guard.js';
import { refusal, type UpstreamError } from './errors.js';

/** Most clients whose own guards are kept per endpoint; past it the least recently used are forgotten. */
export const MAX_CLIENTS = 10_000;

/** The share of an endpoint's slots and queue one client may hold: a quarter (at least one slot, no queue below 4). */
export const CLIENT_SHARE = 0.25;

/** The limits of one client's own guard, from the endpoint's: {@link CLIENT_SHARE} of its slots and queue, its circuit's thresholds. */
export function clientLimits(limits: GuardLimits): GuardLimits {
  return {
    maxInFlight: Math.max(1, Math.floor(limits.maxInFlight * CLIENT_SHARE)),
    maxQueue: Math.floor(limits.maxQueue * CLIENT_SHARE),
    queueWaitMs: limits.queueWaitMs,
    circuitFailures: limits.circuitFailures,
    circuitPauseMs: limits.circuitPauseMs,
  };
}

/** The two tickets of one call, and its client. */
interface Pair {
  readonly client: string;
  readonly own: EndpointGuard;
  readonly ownTicket: Ticket;
  readonly sharedTicket: Ticket;
}

/**
 * The guard of one endpoint for calls of named clients (see the module documentation). Its methods
 * mirror {@link EndpointGuard}'s, with the client's name beside them.
 */
export class ClientShares {
  readonly #shared: EndpointGuard;
  readonly #limits: GuardLimits;
  readonly #observer: ResilienceObserver | undefined;
  readonly #now: (() => number) | undefined;
  readonly #clients: LRUCache<string, EndpointGuard>;
  /** The clients whose failures count in the shared circuit's current run of failures (at most `circuitFailures`). */
  readonly #failing = new Set<string>();
  readonly #calls = new Map<Ticket, Pair>();
  #lastTicket = 0;

  /**
   * @param shared - the endpoint's own guard, which every call of the endpoint passes.
   * @param limits - the endpoint's limits; each client gets {@link clientLimits} of them.
   * @param observer - told of refusals only (a client's guard is no series of its own).
   * @param now - clock in milliseconds (tests); default `performance.now`.
   */
  constructor(shared: EndpointGuard, limits: GuardLimits, observer?: ResilienceObserver, now?: () => number, maxClients = MAX_CLIENTS) {
    this.#shared = shared;
    this.#limits = clientLimits(limits);
    this.#observer = observer;
    this.#now = now;
    this.#clients = new LRUCache({ max: maxClients });
  }

  /** The endpoint's shared guard. */
  get shared(): EndpointGuard {
    return this.#shared;
  }

  /** The own guard of `client`, made on first use. */
  own(client: string): EndpointGuard {
    let guard = this.#clients.get(client);
    if (guard === undefined) {
      const observer = this.#observer;
      const refusals: ResilienceObserver | undefined =
        observer === undefined
          ? undefined
          : { inFlight: noop, circuitState: noop, retried: noop, rejected: (endpoint, reason) => observer.rejected(endpoint, reason) };
      guard = new EndpointGuard(this.#shared.endpoint, this.#shared.service, this.#limits, refusals, undefined, this.#now);
      this.#clients.set(client, guard);
    }
    return guard;
  }

  /**
   * Throws the refusal a new call of `client` would get now, taking nothing ({@link EndpointGuard.refuseEarly}).
   * @throws {@link UpstreamError} `upstream_circuit_open` or `upstream_busy`.
   */
  refuseEarly(client: string): void {
    const own = this.#clients.get(client);
    own?.refuseEarly();
    if (own !== undefined && own.state !== CIRCUIT.closed && this.#shared.state !== CIRCUIT.closed) throw this.#circuitOpen();
    this.#shared.refuseEarly();
  }

  /**
   * Takes a slot of `client`'s share, then one of the endpoint's; the ticket (or its promise) goes to
   * {@link leave}. A call that is its client's own trial is refused while the shared circuit is not
   * closed: a failing client never decides for the others.
   *
   * @throws {@link UpstreamError} as {@link EndpointGuard.enter}; the promise rejects likewise.
   */
  enter(client: string, signal?: Cancellation): Ticket | Promise<Ticket> {
    const own = this.own(client);
    if (own.state !== CIRCUIT.closed && this.#shared.state !== CIRCUIT.closed) throw this.#circuitOpen();
    const ownTicket = own.enter(signal);
    if (ownTicket instanceof Promise) return ownTicket.then((ticket) => this.#enterShared(client, own, ticket, signal));
    return this.#enterShared(client, own, ownTicket, signal);
  }

  #enterShared(client: string, own: EndpointGuard, ownTicket: Ticket, signal: Cancellation | undefined): Ticket | Promise<Ticket> {
    let shared: Ticket | Promise<Ticket>;
    try {
      shared = this.#shared.enter(signal);
    } catch (error) {
      own.leave('neutral', ownTicket);
      throw error;
    }
    if (shared instanceof Promise) {
      return shared.then(
        (ticket) => this.#pair(client, own, ownTicket, ticket),
        (error: unknown) => {
          own.leave('neutral', ownTicket);
          throw error;
        },
      );
    }
    return this.#pair(client, own, ownTicket, shared);
  }

  #pair(client: string, own: EndpointGuard, ownTicket: Ticket, sharedTicket: Ticket): Ticket {
    const ticket = ++this.#lastTicket;
    this.#calls.set(ticket, { client, own, ownTicket, sharedTicket });
    return ticket;
  }

  /**
   * Gives both slots back. The client's own circuit counts the outcome as it is; the shared circuit
   * counts a failure only for a client not yet in its current run of failures (else it is neutral),
   * and any answer ends the run.
   */
  leave(outcome: CallOutcome, ticket: Ticket): void {
    const pair = this.#calls.get(ticket);
    if (pair === undefined) return;
    this.#calls.delete(ticket);
    pair.own.leave(outcome, pair.ownTicket);
    let shared = outcome;
    if (outcome === 'answered') this.#failing.clear();
    else if (outcome === 'failed') {
      if (this.#failing.has(pair.client)) shared = 'neutral';
      else {
        if (this.#failing.size >= Math.max(1, this.#limits.circuitFailures)) this.#failing.clear();
        this.#failing.add(pair.client);
      }
    }
    this.#shared.leave(shared, pair.sharedTicket);
  }

  /** Counts one first call toward the endpoint's retry budget. */
  earn(): void {
    this.#shared.earn();
  }

  /** A retry within the endpoint's budget ({@link EndpointGuard.tryRetry}). */
  tryRetry(): boolean {
    return this.#shared.tryRetry();
  }

  #circuitOpen(): UpstreamError {
    this.#observer?.rejected(this.#shared.endpoint, 'circuit_open');
    return refusal('upstream_circuit_open', Math.max(1, Math.ceil(this.#limits.circuitPauseMs / 1000)), this.#shared.endpoint);
  }
}

function noop(): void {}
