/**
 * The per-endpoint guard of upstream calls (CONTRACT.md "Resilience"; DESIGN.md habit 15): for each
 * upstream endpoint (its EP code, spec 7.2) a **bulkhead** — at most `maxInFlight` calls running, at
 * most `maxQueue` more waiting, each for at most `queueWaitMs` — a **circuit breaker**, and a **retry
 * budget**. A call the guard refuses is never sent: it fails at once with an {@link UpstreamError}
 * `upstream_busy` or `upstream_circuit_open` (503, with `Retry-After` seconds and the EP code).
 *
 * The circuit of an endpoint:
 *
 * | state | a call | goes to |
 * |---|---|---|
 * | closed (0) | runs | open, after `circuitFailures` failures in a row |
 * | open (1) | refused `upstream_circuit_open`, `Retry-After` = the pause left | half-open, for the first call after `circuitPauseMs` |
 * | half-open (2) | the one trial call runs; every other is refused | closed when the trial is answered; open again (a new pause) when it fails |
 *
 * What counts as a failure is the caller's word ({@link EndpointGuard.leave}): timeouts, connection
 * failures and 502/503/504 answers; a 4xx or a 500 is an answer (one client can provoke those).
 *
 * The retry budget: every first call earns {@link RETRY_BUDGET_RATIO} of a token (at most
 * {@link RETRY_TOKENS_MAX} kept, one at the start); a retry spends a whole one, so retries stay under
 * 10% of an endpoint's calls (the SRE book's "Handling Overload").
 *
 * Costs on the fast path (closed circuit, a free slot): a few field reads and writes, no allocation,
 * no promise; a queued call costs one timer and one abort listener.
 *
 * @module
 */
import { refusal, UpstreamError } from './errors.js';

/** The limits of every endpoint's guard (CONTRACT.md "Resilience"; README's configuration table). */
export interface GuardLimits {
  /** Calls of one endpoint running upstream at once (`UPSTREAM_ENDPOINT_MAX_IN_FLIGHT`). */
  readonly maxInFlight: number;
  /** Calls of one endpoint waiting for a slot (`UPSTREAM_ENDPOINT_QUEUE`); `0`: no queue. */
  readonly maxQueue: number;
  /** The longest a call waits for a slot, in milliseconds (`UPSTREAM_QUEUE_WAIT_MS`). */
  readonly queueWaitMs: number;
  /** Failures in a row that open the circuit (`UPSTREAM_CIRCUIT_FAILURES`); `0`: no circuit breaker. */
  readonly circuitFailures: number;
  /** How long an open circuit refuses calls before its trial call, in milliseconds (`UPSTREAM_CIRCUIT_PAUSE_MS`). */
  readonly circuitPauseMs: number;
}

/** Circuit states, as `circuit_state` exports them (CONTRACT.md "Operations"). */
export const CIRCUIT = { closed: 0, open: 1, halfOpen: 2 } as const;
export type CircuitState = (typeof CIRCUIT)[keyof typeof CIRCUIT];
/** The name of each circuit state, for log lines. */
export const CIRCUIT_NAMES: Readonly<Record<CircuitState, string>> = { 0: 'closed', 1: 'open', 2: 'half-open' };

/** How a call ended, for the circuit: answered, failed (counts), or neither (cancelled, refused elsewhere). */
export type CallOutcome = 'answered' | 'failed' | 'neutral';

/**
 * What the guard reports (the metrics of CONTRACT.md "Operations"). Endpoint values are EP codes such
 * as `EP0042`: never a path, user or token. Implementations must be cheap and never throw.
 */
export interface ResilienceObserver {
  /** A call to `endpoint` started (+1) or ended (-1) upstream. */
  inFlight(endpoint: string, delta: 1 | -1): void;
  /** A call refused before it was sent. */
  rejected(endpoint: string, reason: 'busy' | 'circuit_open'): void;
  /** The endpoint's circuit changed state. */
  circuitState(endpoint: string, state: CircuitState): void;
  /** A read was sent a second time (retry). */
  retried(endpoint: string): void;
}

/** Told of every circuit change, for the warn log line of CONTRACT.md "Resilience". */
export type CircuitListener = (endpoint: string, service: string, from: CircuitState, to: CircuitState) => void;

/** The share of an endpoint's calls that may be retries (10%). */
export const RETRY_BUDGET_RATIO = 0.1;
/** Most retry tokens an endpoint keeps (so a quiet period does not buy a burst of retries). */
export const RETRY_TOKENS_MAX = 10;

const NO_SIGNAL_ABORT = (): void => undefined;

/** One call waiting for a slot. */
class Waiter {
  readonly resolve: () => void;
  readonly reject: (error: UpstreamError) => void;
  timer: NodeJS.Timeout | undefined;
  signal: AbortSignal | undefined;
  onAbort: () => void = NO_SIGNAL_ABORT;
  constructor(resolve: () => void, reject: (error: UpstreamError) => void) {
    this.resolve = resolve;
    this.reject = reject;
  }
  /** Stops its timer and abort listener. */
  settle(): void {
    clearTimeout(this.timer);
    this.signal?.removeEventListener('abort', this.onAbort);
  }
}

/** The guard of one upstream endpoint (see the module documentation). */
export class EndpointGuard {
  /** The EP code (spec 7.2) of the endpoint. */
  readonly endpoint: string;
  /** The service's configuration variable (e.g. `BFF_BASE_URL`), for the log line. */
  readonly service: string;
  readonly #limits: GuardLimits;
  readonly #observer: ResilienceObserver | undefined;
  readonly #onCircuit: CircuitListener | undefined;
  readonly #now: () => number;
  #inFlight = 0;
  readonly #queue: Waiter[] = [];
  #state: CircuitState = CIRCUIT.closed;
  #failures = 0;
  #openedAt = 0;
  #retryTokens = 1;

  /**
   * @param endpoint - the EP code.
   * @param service - the service's configuration variable, for logs.
   * @param now - clock in milliseconds (tests); default `performance.now`.
   */
  constructor(
    endpoint: string,
    service: string,
    limits: GuardLimits,
    observer?: ResilienceObserver,
    onCircuit?: CircuitListener,
    now: () => number = () => performance.now(),
  ) {
    this.endpoint = endpoint;
    this.service = service;
    this.#limits = limits;
    this.#observer = observer;
    this.#onCircuit = onCircuit;
    this.#now = now;
  }

  /** Calls running upstream now. */
  get inFlight(): number {
    return this.#inFlight;
  }

  /** Calls waiting for a slot now. */
  get queued(): number {
    return this.#queue.length;
  }

  /** The circuit's state now (an open circuit whose pause has ended still reads open until a call tries it). */
  get state(): CircuitState {
    return this.#state;
  }

  /**
   * Takes a slot for one call. Returns `undefined` when the call may go at once, a promise when it
   * waits in the queue (resolving when it may go), and throws when it may not go at all.
   *
   * @param signal - a client's cancellation (reads): an abort drops the call from the queue.
   * @throws {@link UpstreamError} `upstream_circuit_open` (circuit open, or its trial is running) or
   *   `upstream_busy` (queue full); the returned promise rejects with `upstream_busy` when the wait
   *   runs out and `client_aborted` when `signal` aborts. Each refusal is reported to the observer.
   */
  /**
   * Throws the refusal a new call would get now, without taking a slot or changing the circuit: an
   * open circuit within its pause, a trial running, or every slot and the queue taken. Lets a caller
   * refuse before it spends anything on the call (its cancellation signal, its dispatch options).
   *
   * @throws {@link UpstreamError} `upstream_circuit_open` or `upstream_busy`, as {@link enter} would.
   */
  refuseEarly(): void {
    if (this.#state === CIRCUIT.halfOpen) throw this.#refuse('circuit_open', 1);
    if (this.#state === CIRCUIT.open) {
      const left = this.#openedAt + this.#limits.circuitPauseMs - this.#now();
      if (left > 0) throw this.#refuse('circuit_open', Math.ceil(left / 1000));
      return;
    }
    if (this.#inFlight >= this.#limits.maxInFlight && this.#queue.length >= this.#limits.maxQueue) throw this.#refuse('busy');
  }

  enter(signal?: AbortSignal): Promise<void> | undefined {
    if (this.#state !== CIRCUIT.closed) this.#admitThroughCircuit();
    if (this.#inFlight < this.#limits.maxInFlight) {
      this.#start();
      return undefined;
    }
    if (this.#queue.length >= this.#limits.maxQueue) throw this.#refuse('busy');
    return new Promise<void>((resolve, reject) => {
      const waiter = new Waiter(resolve, reject);
      waiter.timer = setTimeout(() => {
        this.#drop(waiter);
        reject(this.#refuse('busy'));
      }, this.#limits.queueWaitMs);
      if (signal) {
        waiter.signal = signal;
        waiter.onAbort = () => {
          this.#drop(waiter);
          reject(new UpstreamError('client_aborted'));
        };
        signal.addEventListener('abort', waiter.onAbort, { once: true });
      }
      this.#queue.push(waiter);
    });
  }

  /**
   * Gives the slot back and tells the circuit how the call ended. Call exactly once per call that
   * {@link enter} let go.
   */
  leave(outcome: CallOutcome): void {
    this.#inFlight--;
    this.#observer?.inFlight(this.endpoint, -1);
    if (outcome === 'failed') this.#failed();
    else if (outcome === 'answered') this.#answered();
    else if (this.#state === CIRCUIT.halfOpen) {
      // The trial ended without a verdict (its client left): the next call tries again at once.
      this.#openedAt = this.#now() - this.#limits.circuitPauseMs;
      this.#setState(CIRCUIT.open);
    }
    const next = this.#queue.shift();
    if (next !== undefined) {
      next.settle();
      this.#start();
      next.resolve();
    }
  }

  /** Counts one first call toward the retry budget. */
  earn(): void {
    if (this.#retryTokens < RETRY_TOKENS_MAX) this.#retryTokens += RETRY_BUDGET_RATIO;
  }

  /** True (and one token spent, the retry reported) when the budget allows one retry now. */
  tryRetry(): boolean {
    if (this.#retryTokens < 1) return false;
    this.#retryTokens -= 1;
    this.#observer?.retried(this.endpoint);
    return true;
  }

  #start(): void {
    this.#inFlight++;
    this.#observer?.inFlight(this.endpoint, 1);
  }

  /** The circuit's decision for a new call when it is not closed; throws when the call may not go. */
  #admitThroughCircuit(): void {
    if (this.#state === CIRCUIT.halfOpen) throw this.#refuse('circuit_open', 1);
    const left = this.#openedAt + this.#limits.circuitPauseMs - this.#now();
    if (left > 0) throw this.#refuse('circuit_open', Math.ceil(left / 1000));
    // The pause is over: this call is the trial.
    this.#setState(CIRCUIT.halfOpen);
  }

  #answered(): void {
    this.#failures = 0;
    if (this.#state !== CIRCUIT.closed) this.#setState(CIRCUIT.closed);
  }

  #failed(): void {
    const threshold = this.#limits.circuitFailures;
    if (threshold <= 0) return;
    this.#failures++;
    if (this.#state === CIRCUIT.halfOpen || (this.#state === CIRCUIT.closed && this.#failures >= threshold)) {
      this.#openedAt = this.#now();
      this.#setState(CIRCUIT.open);
    }
  }

  #setState(state: CircuitState): void {
    const from = this.#state;
    if (from === state) return;
    this.#state = state;
    this.#observer?.circuitState(this.endpoint, state);
    this.#onCircuit?.(this.endpoint, this.service, from, state);
  }

  #drop(waiter: Waiter): void {
    waiter.settle();
    const index = this.#queue.indexOf(waiter);
    if (index !== -1) this.#queue.splice(index, 1);
  }

  #refuse(reason: 'busy' | 'circuit_open', retryAfterSeconds = 1): UpstreamError {
    this.#observer?.rejected(this.endpoint, reason);
    return refusal(reason === 'busy' ? 'upstream_busy' : 'upstream_circuit_open', Math.max(1, retryAfterSeconds), this.endpoint);
  }
}
