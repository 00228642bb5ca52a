/**
 * The admission of an upstream call, the same for a buffered and a streamed one (docs/behaviour.md
 * "Resilience"): which guard a call passes — its endpoint's (`endpoint-guard.ts`), or its client's
 * share of it (`client-shares.ts`) for a call whose target the client chose —, whether a client's
 * departure cancels it, and how its end counts for the circuit.
 *
 * @module
 */
import type { Cancellation, HttpMethod, UpstreamRequest } from './call.js';
import type { ClientShares } from './client-shares.js';
import type { CallOutcome, Ticket } from './endpoint-guard.js';
import { CIRCUIT_FAILURES, UpstreamError } from './errors.js';
import type { PoolRegistry } from './pools.js';

/** What a call needs of its guard: an endpoint's own (`EndpointGuard`) or a client's share of it ({@link ClientCall}). */
export interface CallGuard {
  refuseEarly(): void;
  enter(signal?: Cancellation): Ticket | Promise<Ticket>;
  leave(outcome: CallOutcome, ticket: Ticket): void;
  earn(): void;
  tryRetry(): boolean;
}

/** One call of a named client through its endpoint's {@link ClientShares}. */
class ClientCall implements CallGuard {
  readonly #shares: ClientShares;
  readonly #client: string;
  constructor(shares: ClientShares, client: string) {
    this.#shares = shares;
    this.#client = client;
  }
  refuseEarly(): void {
    this.#shares.refuseEarly(this.#client);
  }
  enter(signal?: Cancellation): Ticket | Promise<Ticket> {
    return this.#shares.enter(this.#client, signal);
  }
  leave(outcome: CallOutcome, ticket: Ticket): void {
    this.#shares.leave(outcome, ticket);
  }
  earn(): void {
    this.#shares.earn();
  }
  tryRetry(): boolean {
    return this.#shares.tryRetry();
  }
}

/**
 * The guard a call of `service`'s `endpoint` passes: its client's fair share of the endpoint's guard
 * for a call with a {@link UpstreamRequest.client}, else the endpoint's own; none for an unguarded
 * call or pools without limits.
 */
export function guardOf(pools: PoolRegistry, service: string, endpoint: string, req: UpstreamRequest): CallGuard | undefined {
  if (req.unguarded === true) return undefined;
  if (req.client === undefined) return pools.guard(service, endpoint);
  const shares = pools.shares(service, endpoint);
  return shares === undefined ? undefined : new ClientCall(shares, req.client);
}

/** What {@link admit} gives a call its guard did not refuse at once. */
export interface Admission<T> {
  /** What the call sends, made once the guard did not refuse it. */
  readonly prepared: T;
  /** The client's cancellation (reads without side effects only). */
  readonly signal: Cancellation | undefined;
  /** The slot's ticket for the guard's `leave`, or its promise while the call waits in the queue; `0` without a guard. */
  readonly ticket: Ticket | Promise<Ticket>;
}

/**
 * Takes the call's slot: refuses it at once when its guard would, builds what the call sends (`prepare`,
 * only for a call not refused), and enters the guard with the call's cancellation.
 *
 * @throws {@link UpstreamError} `upstream_circuit_open`, `upstream_busy`, `client_aborted` (the client
 *   already left), or what `prepare` throws; the ticket's promise rejects as `EndpointGuard.enter`'s.
 */
export function admit<T>(guard: CallGuard | undefined, req: UpstreamRequest, prepare: () => T): Admission<T> {
  guard?.refuseEarly();
  const prepared = prepare();
  const signal = signalOf(req);
  if (signal?.aborted) throw new UpstreamError('client_aborted');
  return { prepared, signal, ticket: guard === undefined ? 0 : guard.enter(signal) };
}

/** GET and HEAD: the calls a client's departure cancels and a connection failure may retry. */
export function isRead(method: HttpMethod): boolean {
  return method === 'GET' || method === 'HEAD';
}

/** Whether a failed first dispatch of `req` may be sent once more: a read without side effects. */
export function isRetryable(req: UpstreamRequest): boolean {
  return isRead(req.method) && req.sideEffects !== true;
}

/**
 * The cancellation signal of a read (made now when the request holds a function for it); none for
 * other methods and for a read with side effects, which is never cut.
 */
function signalOf(req: UpstreamRequest): Cancellation | undefined {
  if (!isRetryable(req)) return undefined;
  const signal = req.signal;
  return typeof signal === 'function' ? signal() : signal;
}

/** An answer's verdict for the circuit: 502, 503 and 504 are failures; any other status is an answer. */
export function outcomeOfStatus(status: number): CallOutcome {
  return status === 502 || status === 503 || status === 504 ? 'failed' : 'answered';
}

/** A failure's verdict for the circuit: timeouts and connection failures count; a client that left does not. */
export function outcomeOfError(error: UpstreamError): CallOutcome {
  if (CIRCUIT_FAILURES.has(error.code)) return 'failed';
  return error.code === 'client_aborted' ? 'neutral' : 'answered';
}
