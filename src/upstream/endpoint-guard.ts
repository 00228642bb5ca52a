/**
 * The per-endpoint guard of upstream calls (docs/behaviour.md "Resilience"; docs/architecture.md "Habits" (habit 15)): for each
 * upstream endpoint (its EP code, spec 7.2) a **bulkhead** — at most `maxInFlight` calls running, at
 * most `maxQueue` more waiting, each for at most `queueWaitMs` — a **circuit breaker**, and a **retry
 * budget**. A call the guard refuses is never sent: it fails at once with an {@link UpstreamError}
 * `upstream_busy` or `upstream_circuit_open` (503, with `Retry-After` seconds and the EP code).
 *
 * Every call the guard lets go holds a **ticket** ({@link enter} gives it, {@link leave} takes it
 * back): the closed period it was let go in, or the number of a trial. Only the outcomes of the
 * current closed period's calls count toward opening, and only a trial's own outcome closes or
 * reopens the circuit; a call let go before the circuit last changed (one still hung when its
 * circuit opened, a trial overtaken by another) moves nothing.
 *
 * The circuit of an endpoint:
 *
 * | state | a new call | a queued call | goes to |
 * |---|---|---|---|
 * | closed (0) | runs, or waits in the queue | gets the next free slot | open, after `circuitFailures` failures in a row |
 * | open (1) | refused `upstream_circuit_open` (`Retry-After`: the pause left), until the pause is over **and** a slot is free: then it is a trial | none: every queued call is refused `upstream_circuit_open` when the circuit opens | half-open, when a trial goes |
 * | half-open (2) | refused (`Retry-After: 1`), until one pause after the last trial (at most {@link MAX_TRIALS_WAITING} trials waiting, a slot free): then it is one more trial | none | closed when a trial is answered; open when a trial fails |
 *
 * A trial is never queued: it goes only when a slot is free, so the circuit never turns half-open
 * with a trial stuck behind calls that hold every slot. At most one trial goes per pause, and a trial
 * still waiting for its answer when the next pause ends does not hold the circuit: the next trial
 * goes beside it (at most {@link MAX_TRIALS_WAITING} waiting), so an endpoint that recovers while an
 * earlier trial hangs is tried again, and used again, within the pause. A trial that fails while no
 * other is waiting starts a new pause; a trial cancelled by its client decides nothing (the next one
 * goes one pause after it, as ever).
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
import type { Cancellation } from './call.js';
import { refusal, UpstreamError } from './errors.js';

/** The limits of every endpoint's guard (docs/behaviour.md "Resilience"; their variables in docs/configuration.md). */
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

/** Circuit states, as `circuit_state` exports them (docs/behaviour.md "Operations"). */
export const CIRCUIT = { closed: 0, open: 1, halfOpen: 2 } as const;
export type CircuitState = (typeof CIRCUIT)[keyof typeof CIRCUIT];
/** The name of each circuit state, for log lines. */
export const CIRCUIT_NAMES: Readonly<Record<CircuitState, string>> = { 0: 'closed', 1: 'open', 2: 'half-open' };

/** How a call ended, for the circuit: answered, failed (counts), or neither (cancelled, refused elsewhere). */
export type CallOutcome = 'answered' | 'failed' | 'neutral';

/**
 * What the guard reports (the metrics of docs/behaviour.md "Resilience" and "Operations"; the metrics
 * step implements it). Endpoint values are EP codes such as `EP0042`: never a path, user or token.
 * Implementations must be cheap and never throw.
 */
export interface ResilienceObserver {
  /** A call to `endpoint` started (+1) or ended (-1) upstream (`upstream_in_flight`). */
  inFlight(endpoint: string, delta: 1 | -1): void;
  /** A call refused before it was sent (`upstream_rejected_total`). */
  rejected(endpoint: string, reason: 'busy' | 'circuit_open'): void;
  /** The endpoint's circuit changed state (`circuit_state`: 0 closed, 1 open, 2 half-open). */
  circuitState(endpoint: string, state: CircuitState): void;
  /** A read was sent a second time (`upstream_retries_total`). */
  retried(endpoint: string): void;
}

/** Told of every circuit change, for the warn log line of docs/behaviour.md "Resilience". */
export type CircuitListener = (endpoint: string, service: string, from: CircuitState, to: CircuitState) => void;

/** The share of an endpoint's calls that may be retries (10%). */
export const RETRY_BUDGET_RATIO = 0.1;
/** Most retry tokens an endpoint keeps (so a quiet period does not buy a burst of retries). */
export const RETRY_TOKENS_MAX = 10;

/**
 * Most trial calls of one endpoint waiting for their answer at once (docs/behaviour.md "Resilience"): one
 * more goes per pause while earlier ones hang, up to this many.
 */
export const MAX_TRIALS_WAITING = 3;

/**
 * What {@link EndpointGuard.enter} gives a call it lets go, to be handed back to
 * {@link EndpointGuard.leave}: the closed period the call was let go in, or the number of a trial
 * (both positive integers, never reused by the same guard).
 */
export type Ticket = number;

const NO_SIGNAL_ABORT = (): void => undefined;

/** What {@link EndpointGuard.earlyRefusal} gives: the refusal's code and the seconds a client should wait (`Retry-After`, at least 1). */
export interface EarlyRefusal {
  readonly code: 'upstream_busy' | 'upstream_circuit_open';
  readonly retryAfterSeconds: number;
}

/** One call waiting for a slot. */
class Waiter {
  readonly resolve: (ticket: Ticket) => void;
  readonly reject: (error: UpstreamError) => void;
  timer: NodeJS.Timeout | undefined;
  signal: Cancellation | undefined;
  onAbort: () => void = NO_SIGNAL_ABORT;
  constructor(resolve: (ticket: Ticket) => void, reject: (error: UpstreamError) => void) {
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
  /** The last ticket given (closed periods and trials draw from the same count). */
  #lastTicket = 1;
  /** The ticket of the calls let go in the current closed period (stale once the circuit opens). */
  #closedTicket = 1;
  /** The tickets of the trials let go and not yet ended, oldest first (at most {@link MAX_TRIALS_WAITING}). */
  readonly #trials: Ticket[] = [];
  /** When, on the guard's clock (ms), the next trial may go. */
  #nextTrialAt = 0;
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

  /** Calls running upstream now (trials included). */
  get inFlight(): number {
    return this.#inFlight;
  }

  /** Calls waiting for a slot now (always 0 while the circuit is not closed). */
  get queued(): number {
    return this.#queue.length;
  }

  /** Trial calls let go and not yet ended (0 while the circuit is closed). */
  get trialsWaiting(): number {
    return this.#trials.length;
  }

  /** The circuit's state now (an open circuit whose pause has ended still reads open until a trial goes). */
  get state(): CircuitState {
    return this.#state;
  }

  /**
   * Throws the refusal a new call would get now, without taking a slot or changing the circuit: a
   * circuit not closed whose next trial may not go yet (within the pause, {@link MAX_TRIALS_WAITING}
   * trials waiting, or no free slot), or every slot and the queue taken. Lets a caller refuse before it
   * spends anything on the call (its cancellation signal, its dispatch options).
   *
   * @throws {@link UpstreamError} `upstream_circuit_open` or `upstream_busy`, as {@link enter} would.
   */
  refuseEarly(): void {
    const refused = this.earlyRefusal();
    if (refused !== undefined) throw refusal(refused.code, refused.retryAfterSeconds, this.endpoint);
  }

  /**
   * {@link refuseEarly} without the throw: the refusal a new call would get now, as its code and
   * `Retry-After`, or `undefined` when the call may go (a closed circuit with a free slot or room in
   * the queue, or a trial that is due). Nothing is taken or changed; a refusal is reported to the
   * observer (`upstream_rejected_total`), as the answer that follows it is final. For a caller that
   * answers the refusal itself, before it spends anything on the call (the request's handler).
   */
  earlyRefusal(): EarlyRefusal | undefined {
    if (this.#state !== CIRCUIT.closed) return this.#circuitRefusal();
    if (this.#inFlight >= this.#limits.maxInFlight && this.#queue.length >= this.#limits.maxQueue) return this.#refused('busy', 1);
    return undefined;
  }

  /**
   * Takes a slot for one call. Returns the call's {@link Ticket} when it may go at once, a promise of
   * it when it waits in the queue (resolving when it may go), and throws when it may not go at all.
   * While the circuit is not closed a call goes only as a trial (see the module documentation), never
   * through the queue.
   *
   * @param signal - a client's cancellation (reads): an abort drops the call from the queue.
   * @returns the ticket to hand to {@link leave}, or a promise of it.
   * @throws {@link UpstreamError} `upstream_circuit_open` (circuit not closed and no trial due) or
   *   `upstream_busy` (queue full); the returned promise rejects with `upstream_busy` when the wait
   *   runs out, `upstream_circuit_open` when the circuit opens while the call waits, and
   *   `client_aborted` when `signal` aborts. Each refusal is reported to the observer.
   */
  enter(signal?: Cancellation): Ticket | Promise<Ticket> {
    if (this.#state !== CIRCUIT.closed) {
      this.#refuseUnlessTrial();
      return this.#startTrial();
    }
    if (this.#inFlight < this.#limits.maxInFlight) {
      this.#start();
      return this.#closedTicket;
    }
    if (this.#queue.length >= this.#limits.maxQueue) throw this.#refuse('busy');
    return new Promise<Ticket>((resolve, reject) => {
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
   * {@link enter} let go, with the ticket it gave. The outcome counts only for a call of the current
   * closed period (toward opening) or for a trial (closes or reopens); any other call's outcome is
   * stale and moves nothing. A freed slot goes to the oldest queued call while the circuit is closed.
   */
  leave(outcome: CallOutcome, ticket: Ticket): void {
    this.#inFlight--;
    this.#observer?.inFlight(this.endpoint, -1);
    if (ticket === this.#closedTicket) {
      if (this.#state === CIRCUIT.closed) {
        if (outcome === 'failed') this.#failed();
        else if (outcome === 'answered') this.#failures = 0;
      }
    } else {
      const trial = this.#trials.indexOf(ticket);
      if (trial !== -1) {
        this.#trials.splice(trial, 1);
        this.#trialEnded(outcome);
      }
    }
    if (this.#state !== CIRCUIT.closed) return;
    const next = this.#queue.shift();
    if (next !== undefined) {
      next.settle();
      this.#start();
      next.resolve(this.#closedTicket);
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

  /**
   * The circuit is not closed: throws `upstream_circuit_open` unless a trial may go now (the pause
   * since the opening or the last trial is over, fewer than {@link MAX_TRIALS_WAITING} trials wait, a
   * slot is free). `Retry-After`: the pause left while open, 1 s while half-open or when the pause is
   * over but no trial may go.
   */
  #refuseUnlessTrial(): void {
    const refused = this.#circuitRefusal();
    if (refused !== undefined) throw refusal(refused.code, refused.retryAfterSeconds, this.endpoint);
  }

  /** {@link #refuseUnlessTrial}'s refusal (reported), or `undefined` when a trial may go now. */
  #circuitRefusal(): EarlyRefusal | undefined {
    const left = this.#nextTrialAt - this.#now();
    // Open: `Retry-After` is the pause left. Half-open: 1 s, as a trial running may close it any moment.
    if (left > 0) return this.#refused('circuit_open', this.#state === CIRCUIT.halfOpen ? 1 : Math.ceil(left / 1000));
    if (this.#trials.length >= MAX_TRIALS_WAITING || this.#inFlight >= this.#limits.maxInFlight) return this.#refused('circuit_open', 1);
    return undefined;
  }

  /** Lets one trial go: its own ticket, the next trial one pause later. */
  #startTrial(): Ticket {
    const ticket = ++this.#lastTicket;
    this.#trials.push(ticket);
    this.#nextTrialAt = this.#now() + this.#limits.circuitPauseMs;
    this.#start();
    this.#setState(CIRCUIT.halfOpen);
    return ticket;
  }

  /** A trial ended: its answer closes the circuit, its failure reopens it; a cancelled trial decides nothing. */
  #trialEnded(outcome: CallOutcome): void {
    if (outcome === 'answered') {
      this.#failures = 0;
      // The trials still waiting belong to the open period: their outcomes are stale now.
      this.#trials.length = 0;
      this.#setState(CIRCUIT.closed);
      return;
    }
    // A failure with no other trial waiting starts a new pause (it cannot be shorter than the one the
    // trial began); with others waiting, the next trial stays one pause after the last one sent.
    if (outcome === 'failed' && this.#trials.length === 0)
      this.#nextTrialAt = Math.max(this.#nextTrialAt, this.#now() + this.#limits.circuitPauseMs);
    if (outcome === 'failed' || this.#trials.length === 0) this.#setState(CIRCUIT.open);
  }

  /** A call of the current closed period failed: the circuit opens after `circuitFailures` in a row. */
  #failed(): void {
    const threshold = this.#limits.circuitFailures;
    if (threshold <= 0) return;
    this.#failures++;
    if (this.#failures < threshold) return;
    this.#failures = 0;
    // The calls still running were let go in the closed period: their outcomes are stale from now on.
    this.#closedTicket = ++this.#lastTicket;
    this.#nextTrialAt = this.#now() + this.#limits.circuitPauseMs;
    this.#setState(CIRCUIT.open);
    // None of the queued calls is sent while the circuit is not closed.
    const retryAfter = Math.ceil(this.#limits.circuitPauseMs / 1000);
    for (const waiter of this.#queue.splice(0)) {
      waiter.settle();
      waiter.reject(this.#refuse('circuit_open', retryAfter));
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
    const refused = this.#refused(reason, retryAfterSeconds);
    return refusal(refused.code, refused.retryAfterSeconds, this.endpoint);
  }

  /** A refusal for `reason`, reported to the observer. */
  #refused(reason: 'busy' | 'circuit_open', retryAfterSeconds: number): EarlyRefusal {
    this.#observer?.rejected(this.endpoint, reason);
    return { code: reason === 'busy' ? 'upstream_busy' : 'upstream_circuit_open', retryAfterSeconds: Math.max(1, retryAfterSeconds) };
  }
}
