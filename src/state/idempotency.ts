/**
 * Money moves reach the upstream exactly once (docs/behaviour.md "Money moves: exactly once"; docs/architecture.md
 * "Habits" (habit 12)): `POST /api/payments/deposit` and `POST /api/payments/withdraw` go through
 * {@link Idempotency.run}, across every process and instance that share the {@link SharedStore}.
 *
 * - The record's key is the client's `Idempotency-Key` (1-255 visible ASCII characters; its answer is
 *   kept {@link HEADER_KEY_TTL_MS}), or without one the session plus the canonical body (kept
 *   {@link IMPLICIT_KEY_TTL_MS} after the first answer: a double click). Keys are scoped by the
 *   session and by the move, and kept only as SHA-256 digests.
 * - The key sent upstream identifies the submission, not its content: the client's key as given, or
 *   without one a fresh random id per submission. It is kept in the record, so that a retry after an
 *   unknown outcome sends the same one, and two real deposits of one amount never share one.
 * - Before the upstream call a pending marker is written atomically (`SET NX`); its value names the
 *   attempt, the upstream key and the end of its lease (epoch ms). The lease covers the whole time the
 *   call may still be queued or running on this instance — the longest call (the endpoint's queue
 *   wait, then the upstream time limit) plus {@link LEASE_MARGIN_MS} — and the marker outlives it by
 *   {@link TAKEOVER_MS}: a repeat after the lease takes the marker over atomically and goes upstream
 *   again with the same upstream key, so that the BFF's own idempotency decides. Every record is
 *   written `replicated` (docs/behaviour.md "Several instances"): a marker the replicas did not
 *   acknowledge is deleted again, and the move is refused 503 `idempotency_unavailable` with
 *   `Retry-After` after trying for at most {@link MARKER_WAIT_MS} — so that a replica promoted by a
 *   failover knows every move in flight.
 * - A repeat of a settled key replays the stored answer (`replayed`). A repeat while the first is in
 *   flight waits for it up to {@link WAIT_MS} (here or on another instance) and replays it, else
 *   answers 409 `request_in_progress` with `Retry-After`. The same header key with another body
 *   answers 422 `idempotency_key_reused`.
 * - An answer the upstream gave is never given up: one the store cannot take at once (a failover
 *   under way) waits in a bounded queue ({@link MAX_UNSTORED_ANSWERS}; while it is full new moves are
 *   refused 503) and is written again every {@link STORE_RETRY_MS} until it is stored or another record
 *   holds its key — time does not empty the queue —, its marker's lease renewed meanwhile so that no
 *   other instance sends the move again; {@link Idempotency.flush} writes the queue at shutdown before
 *   the store closes, and what it could not write {@link Idempotency.handOff} hands to the other
 *   instances by pub/sub (a Redis that refuses writes still relays messages), which take it into their
 *   own queue. A repeat on an instance replays a queued answer at once.
 * - An unknown outcome (time-out, connection broken after the request may have left) stores nothing:
 *   the marker turns `unknown` and stays until its lease ends (repeats answer 409), then a repeat goes
 *   upstream again with the same upstream key. A call that certainly never left (connection
 *   refused, the endpoint's guard refusing, service not configured) frees the key at once.
 * - Stored answers hold no credential: the session JWT is removed from the body before it is kept.
 *
 * @module
 */
import { hash, randomUUID } from 'node:crypto';
import { envelope, type ProxyAnswer } from '../envelope.js';
import { REFUSALS, UpstreamError } from '../upstream/errors.js';
import { type HandedAnswer, KEY_PREFIX, type SharedStore, StateUnavailableError } from './store.js';

/** How long the answer of a submission with an `Idempotency-Key` header is replayed (24 h), in milliseconds. */
export const HEADER_KEY_TTL_MS = 24 * 60 * 60 * 1000;
/** How long the answer of a submission without one is replayed (5 s), in milliseconds. */
export const IMPLICIT_KEY_TTL_MS = 5_000;
/** The pending marker's lease beyond the longest upstream call, in milliseconds. */
export const LEASE_MARGIN_MS = 5_000;
/** How long a marker outlives its lease, so that a repeat then sends the same upstream key, in milliseconds. */
export const TAKEOVER_MS = 5_000;
/** Longest wait of a repeat for the first submission's answer before 409, in milliseconds. */
export const WAIT_MS = 3_000;
/** How long a move tries to have its marker taken (and acknowledged) before it is refused 503, in milliseconds. */
export const MARKER_WAIT_MS = 1_500;
/** The `Retry-After` of a 503 `idempotency_unavailable`, in seconds. */
export const UNAVAILABLE_RETRY_AFTER_S = 1;
/** Pause between two attempts to store an answer the store refused (a failover under way), in milliseconds. */
export const STORE_RETRY_MS = 250;
/** Most answers waiting to be stored; while this many wait, new moves are refused 503. */
export const MAX_UNSTORED_ANSWERS = 10_000;
/** How long {@link Idempotency.flush} tries at shutdown to store the answers still waiting, in milliseconds. */
export const FLUSH_MS = 5_000;
/** Most answers in one hand-off message ({@link Idempotency.handOff}). */
export const HAND_OFF_BATCH = 100;
/** What an `Idempotency-Key` header may hold. */
export const IDEMPOTENCY_KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

/** The outcome of a submission, for metrics and logs (docs/behaviour.md "Operations"). */
export type IdempotencyDecision = 'forwarded' | 'replayed' | 'in_progress' | 'mismatch' | 'unavailable';

/** One money-move submission. */
export interface Submission {
  /** `deposit` or `withdraw`: keys of the two never meet. */
  readonly move: string;
  /** The session JWT (scopes the key; removed from stored answers). */
  readonly token: string;
  /**
   * The SHA-256 hex digest of {@link token}, when the caller has it already (the request's session
   * token key, `session/cookie.ts`): the key's scope is taken over it instead of hashing the token again.
   */
  readonly tokenKey?: string | undefined;
  /** The client's `Idempotency-Key`, when it sent one (already checked against {@link IDEMPOTENCY_KEY_PATTERN}). */
  readonly key: string | undefined;
  /** The canonical text of the upstream body: equal submissions give equal text. */
  readonly body: string;
}

/** The answer to a submission and how it was decided. */
export interface IdempotentAnswer {
  readonly answer: ProxyAnswer;
  readonly decision: IdempotencyDecision;
  /** With `in_progress` and `unavailable`: when to try again, in seconds (the `Retry-After` header). */
  readonly retryAfterSeconds?: number;
}

interface PendingRecord {
  /** `pending`: in flight; `unknown`: its outcome is unknown. */
  s: 'pending' | 'unknown';
  /** The SHA-256 of the body. */
  f: string;
  /** The end of the lease (epoch ms): afterwards a repeat may take the marker over. */
  until?: number;
  /**
   * The attempt that wrote it (a random UUID), so that replacing or deleting it again can only touch
   * this attempt's own marker, never another instance's marker for the same key and body.
   */
  a?: string;
  /** The `Idempotency-Key` sent upstream. */
  k?: string;
}
interface DoneRecord {
  s: 'done';
  f: string;
  status: number;
  type?: string;
  /** The body as text (`b64`: base64 of bytes; `json`: a JSON object). */
  body: string | null;
  enc: 'text' | 'b64' | 'json';
}
type StoredRecord = PendingRecord | DoneRecord;

/** The records of a money move must survive a failover (see the module documentation). */
const REPLICATED = { replicated: true } as const;

const sha256 = (text: string): string => hash('sha256', text, 'hex');

function parseRecord(text: string | null): StoredRecord | undefined {
  if (text === null) return undefined;
  try {
    const record = JSON.parse(text) as StoredRecord;
    return record.s === 'pending' || record.s === 'unknown' || record.s === 'done' ? record : undefined;
  } catch {
    return undefined;
  }
}

function redact(text: string, token: string): string {
  return token.length >= 16 && text.includes(token) ? text.replaceAll(token, '[redacted]') : text;
}

/** The record of an answer, the session JWT removed from its body. */
function doneRecord(fingerprint: string, answer: ProxyAnswer, token: string): DoneRecord {
  const base = { s: 'done' as const, f: fingerprint, status: answer.status, ...(answer.contentType ? { type: answer.contentType } : {}) };
  const body = answer.body;
  if (body === null) return { ...base, body: null, enc: 'text' };
  if (Buffer.isBuffer(body)) {
    const text = body.toString('utf8');
    return Buffer.from(text, 'utf8').equals(body)
      ? { ...base, body: redact(text, token), enc: 'text' }
      : { ...base, body: body.toString('base64'), enc: 'b64' };
  }
  if (typeof body === 'string') return { ...base, body: redact(body, token), enc: 'text' };
  return { ...base, body: redact(JSON.stringify(body), token), enc: 'json' };
}

function answerOf(record: DoneRecord): ProxyAnswer {
  const contentType = record.type;
  if (record.body === null) return { status: record.status, body: null };
  if (record.enc === 'json') return { status: record.status, body: JSON.parse(record.body) as object };
  const body = record.enc === 'b64' ? Buffer.from(record.body, 'base64') : record.body;
  return contentType ? { status: record.status, body, contentType } : { status: record.status, body };
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * The store key of a submission's record: the client's key, or without one the body, scoped by the
 * move and the session (the token's SHA-256 digest: `tokenKey` when given, else made here), as a
 * SHA-256 digest under the proxy's prefix (a cluster's slot follows from it).
 */
export function recordKey(submission: Pick<Submission, 'move' | 'token' | 'tokenKey' | 'key' | 'body'>): string {
  const scope = `${submission.move}\n${submission.tokenKey ?? sha256(submission.token)}`;
  return `${KEY_PREFIX}idem:${sha256(submission.key === undefined ? `body\n${scope}\n${submission.body}` : `key\n${scope}\n${submission.key}`)}`;
}

/** True when the call certainly never reached the upstream. */
function neverSent(error: unknown): boolean {
  if (!(error instanceof UpstreamError)) return false;
  // The proxy's own refusals (not configured, the endpoint's guard: busy, circuit open) send nothing.
  if (REFUSALS.has(error.code)) return true;
  const cause = (error.cause as { code?: unknown } | undefined)?.code;
  return cause === 'ECONNREFUSED' || cause === 'UND_ERR_CONNECT_TIMEOUT' || cause === 'ENOTFOUND';
}

/** An answer the store has not taken yet (see the module documentation). */
interface UnstoredAnswer {
  readonly storeKey: string;
  readonly fingerprint: string;
  readonly answer: ProxyAnswer;
  /** The done record's text. */
  readonly record: string;
  readonly ttlMs: number;
  /** The marker's text as last written (renewals replace it). */
  marker: string;
  /** The end of that marker's lease (epoch ms). */
  until: number;
  /** An attempt to store it is under way. */
  busy: boolean;
}

/** A marker this instance wrote: its text and its record. */
interface Claim {
  readonly text: string;
  readonly record: PendingRecord & { until: number; k: string };
}

/** See the module documentation. */
export class Idempotency {
  readonly #store: SharedStore;
  readonly #leaseMs: number;
  readonly #waitMs: number;
  readonly #now: () => number;
  /** Submissions in flight in this process: a repeat here waits on the promise, not on the store. */
  readonly #inFlight = new Map<string, { fingerprint: string; promise: Promise<ProxyAnswer>; until: number }>();
  /** Answers the store has not taken yet, by record key (at most {@link MAX_UNSTORED_ANSWERS}). */
  readonly #unstored = new Map<string, UnstoredAnswer>();
  #retryTimer: NodeJS.Timeout | undefined;
  readonly #onDecision: ((decision: IdempotencyDecision) => void) | undefined;
  readonly #maxUnstored: number;
  /** This instance's name in hand-off messages (it ignores its own). */
  readonly #instance = randomUUID();

  /**
   * @param longestCallMs - the longest a money move's upstream call may be queued or running, in
   *   milliseconds (`longestCallMs` of `upstream/deadline.ts`: the endpoint's queue wait plus the
   *   upstream time limit); the pending marker's lease is this plus {@link LEASE_MARGIN_MS}.
   * @param options.waitMs - longest wait for a repeat's first submission, in milliseconds; default {@link WAIT_MS}.
   * @param options.onDecision - told each decision as it is taken (the metrics): `forwarded` before the
   *   upstream call, so that a call that then fails still counts; the others when {@link run} answers.
   * @param options.now - the clock, in epoch milliseconds (tests); default `Date.now`.
   * @param options.maxUnstored - most answers waiting to be stored; default {@link MAX_UNSTORED_ANSWERS}.
   */
  constructor(
    store: SharedStore,
    longestCallMs: number,
    options: {
      waitMs?: number;
      onDecision?: ((decision: IdempotencyDecision) => void) | undefined;
      now?: () => number;
      maxUnstored?: number;
    } = {},
  ) {
    this.#store = store;
    this.#leaseMs = longestCallMs + LEASE_MARGIN_MS;
    this.#waitMs = options.waitMs ?? WAIT_MS;
    this.#onDecision = options.onDecision;
    this.#now = options.now ?? Date.now;
    this.#maxUnstored = options.maxUnstored ?? MAX_UNSTORED_ANSWERS;
    store.subscribe({
      event: (event) => {
        if (event.type === 'answers' && event.from !== this.#instance) this.#adopt(event.answers);
      },
      resync: () => {},
    });
  }

  /** The pending marker's lease, in milliseconds. */
  get leaseMs(): number {
    return this.#leaseMs;
  }

  /** Submissions in flight in this process. */
  get inFlight(): number {
    return this.#inFlight.size;
  }

  /** Answers the upstream gave that the store has not taken yet. */
  get unstored(): number {
    return this.#unstored.size;
  }

  /** Why new money moves are refused now (the store's reason, or the queue of unstored answers full), or `undefined`. */
  get refusal(): string | undefined {
    if (this.#unstored.size >= this.#maxUnstored) return `${this.#unstored.size} answers wait to be stored`;
    return this.#store.refusal;
  }

  /**
   * Runs `call` once for the submission, or answers from its record.
   *
   * @param call - makes the upstream call with the `Idempotency-Key` to forward; resolves to the
   *   answer to store (any status), rejects with an `UpstreamError` when the outcome is unknown.
   * @throws UpstreamError from `call` (the marker then stays until its lease ends, unless the call never left).
   */
  async run(submission: Submission, call: (upstreamKey: string) => Promise<ProxyAnswer>): Promise<IdempotentAnswer> {
    const result = await this.#run(submission, call);
    if (result.decision !== 'forwarded') this.#onDecision?.(result.decision);
    return result;
  }

  async #run(submission: Submission, call: (upstreamKey: string) => Promise<ProxyAnswer>): Promise<IdempotentAnswer> {
    const fingerprint = sha256(submission.body);
    const storeKey = recordKey(submission);
    const ttlMs = submission.key === undefined ? IMPLICIT_KEY_TTL_MS : HEADER_KEY_TTL_MS;
    const deadline = this.#now() + this.#waitMs;
    for (let pause = 25; ; pause = Math.min(pause * 2, 250)) {
      const local = this.#inFlight.get(storeKey);
      if (local) {
        if (local.fingerprint !== fingerprint) return reused();
        return this.#awaitLocal(local, deadline);
      }
      const queued = this.#unstored.get(storeKey);
      if (queued) return queued.fingerprint === fingerprint ? { answer: queued.answer, decision: 'replayed' } : reused();
      if (this.#unstored.size >= this.#maxUnstored) return unavailable();
      let claim: Claim | undefined;
      let existing: StoredRecord | undefined;
      try {
        const taken = await this.#claim(storeKey, fingerprint, submission.key);
        if ('claim' in taken) claim = taken.claim;
        else {
          existing = parseRecord(taken.previous);
          // A marker whose lease ended (its instance gone, or its outcome unknown): taken over atomically, same upstream key.
          if (
            existing &&
            existing.s !== 'done' &&
            existing.f === fingerprint &&
            existing.until !== undefined &&
            existing.until <= this.#now()
          ) {
            claim = await this.#takeOver(storeKey, taken.previous, existing);
            if (!claim) continue;
          }
        }
      } catch (error) {
        if (error instanceof StateUnavailableError) return unavailable();
        throw error;
      }
      if (claim) {
        this.#onDecision?.('forwarded');
        return { answer: await this.#forward(storeKey, fingerprint, claim, ttlMs, submission, call), decision: 'forwarded' };
      }
      if (existing && existing.f !== fingerprint) return reused();
      if (existing?.s === 'done') return { answer: answerOf(existing), decision: 'replayed' };
      if (existing?.s === 'unknown') return inProgress(this.#secondsLeft(existing.until));
      if (this.#now() >= deadline) return inProgress(this.#secondsLeft(existing?.until));
      await sleep(pause);
    }
  }

  /** Seconds until `until` (epoch ms), at least 1: a `Retry-After`. */
  #secondsLeft(until: number | undefined): number {
    return Math.max(1, Math.ceil(((until ?? 0) - this.#now()) / 1000));
  }

  /** A repeat of a submission in flight here: its answer, or 409 once `deadline` (epoch ms) has passed. */
  async #awaitLocal(local: { promise: Promise<ProxyAnswer>; until: number }, deadline: number): Promise<IdempotentAnswer> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<undefined>((resolve) => {
      timer = setTimeout(resolve, Math.max(0, deadline - this.#now()), undefined);
    });
    try {
      const answer = await Promise.race([local.promise, timeout]);
      return answer === undefined ? inProgress(this.#secondsLeft(local.until)) : { answer, decision: 'replayed' };
    } catch {
      return inProgress(this.#secondsLeft(local.until));
    } finally {
      clearTimeout(timer);
    }
  }

  /** A new marker's record: a fresh attempt, `upstreamKey` (or a fresh one), a lease from now. */
  #marker(fingerprint: string, upstreamKey: string | undefined): Claim {
    const record = {
      s: 'pending' as const,
      f: fingerprint,
      a: randomUUID(),
      k: upstreamKey ?? randomUUID(),
      until: this.#now() + this.#leaseMs,
    };
    return { text: JSON.stringify(record satisfies PendingRecord), record };
  }

  /**
   * Writes a new marker where the key is free; a refusal of the store (no acknowledgement, a
   * failover under way) is tried again with a fresh attempt for up to {@link MARKER_WAIT_MS}. A
   * refused attempt's marker may have stayed (its delete failed too): found by a later attempt, it is
   * replaced atomically by that attempt's own, never taken for another move in flight (a 409 for a
   * move that never started).
   * @throws StateUnavailableError when the store still refuses.
   */
  async #claim(storeKey: string, fingerprint: string, clientKey: string | undefined): Promise<{ claim: Claim } | { previous: string }> {
    const deadline = this.#now() + MARKER_WAIT_MS;
    const refused: string[] = [];
    for (;;) {
      const claim = this.#marker(fingerprint, clientKey);
      try {
        const previous = await this.#store.setIfAbsent(storeKey, claim.text, this.#leaseMs + TAKEOVER_MS, REPLICATED);
        if (previous === null) return { claim };
        if (!refused.includes(previous)) return { previous };
        refused.push(claim.text);
        if (await this.#store.replaceIf(storeKey, claim.text, this.#leaseMs + TAKEOVER_MS, { ifEquals: [previous] }, REPLICATED))
          return { claim };
      } catch (error) {
        if (!(error instanceof StateUnavailableError) || this.#now() + STORE_RETRY_MS >= deadline) throw error;
        refused.push(claim.text);
        await sleep(STORE_RETRY_MS);
      }
    }
  }

  /** Replaces an expired marker (`previous`) with this attempt's, keeping its upstream key; `undefined` when another attempt was faster. */
  async #takeOver(storeKey: string, previous: string, existing: PendingRecord): Promise<Claim | undefined> {
    const claim = this.#marker(existing.f, existing.k);
    const taken = await this.#store.replaceIf(storeKey, claim.text, this.#leaseMs + TAKEOVER_MS, { ifEquals: [previous] }, REPLICATED);
    return taken ? claim : undefined;
  }

  async #forward(
    storeKey: string,
    fingerprint: string,
    claim: Claim,
    ttlMs: number,
    submission: Submission,
    call: (upstreamKey: string) => Promise<ProxyAnswer>,
  ): Promise<ProxyAnswer> {
    const { until } = claim.record;
    const promise = call(claim.record.k);
    this.#inFlight.set(storeKey, { fingerprint, promise, until });
    try {
      const answer = await promise;
      // Kept whatever its status: a repeat replays it. A store that cannot take it now (a failover
      // under way) leaves it queued, its marker renewed, until it can (see the module documentation).
      const unstored: UnstoredAnswer = {
        storeKey,
        fingerprint,
        answer,
        record: JSON.stringify(doneRecord(fingerprint, answer, submission.token)),
        ttlMs,
        marker: claim.text,
        until,
        busy: true,
      };
      this.#unstored.set(storeKey, unstored);
      await this.#storeAnswer(unstored);
      return answer;
    } catch (error) {
      if (neverSent(error)) {
        await this.#store.deleteIfEquals(storeKey, claim.text).catch(() => {});
      } else {
        // Unknown outcome: repeats answer 409 at once until the lease ends, then one takes it over.
        const unknown = JSON.stringify({ s: 'unknown', f: fingerprint, until, k: claim.record.k } satisfies PendingRecord);
        const left = until + TAKEOVER_MS - this.#now();
        if (left > 0) await this.#store.replaceIf(storeKey, unknown, left, { ifEquals: [claim.text] }, REPLICATED).catch(() => false);
      }
      throw error;
    } finally {
      this.#inFlight.delete(storeKey);
    }
  }

  /**
   * One attempt to store a queued answer: over its own marker or where the key is free. Stored, or
   * another record holding the key: it leaves the queue. Refused: it stays, its marker's lease is
   * renewed when less than half of it is left, and the queue is tried again in {@link STORE_RETRY_MS}.
   */
  async #storeAnswer(entry: UnstoredAnswer): Promise<void> {
    entry.busy = true;
    try {
      await this.#store.replaceIf(
        entry.storeKey,
        entry.record,
        entry.ttlMs,
        { ifEquals: [entry.marker, entry.record], ifAbsent: true },
        REPLICATED,
      );
      // Stored, or another record holds the key (a later attempt after this one's lease): either way done here.
      this.#unstored.delete(entry.storeKey);
    } catch {
      if (entry.until - this.#now() < this.#leaseMs / 2) await this.#renew(entry);
      this.#scheduleRetry();
    } finally {
      entry.busy = false;
    }
  }

  /** Extends the lease of a queued answer's marker, so that no other instance takes it over meanwhile. */
  async #renew(entry: UnstoredAnswer): Promise<void> {
    const record = { ...(parseRecord(entry.marker) as PendingRecord), until: this.#now() + this.#leaseMs };
    const renewed = JSON.stringify(record);
    try {
      if (
        await this.#store.replaceIf(entry.storeKey, renewed, this.#leaseMs + TAKEOVER_MS, { ifEquals: [entry.marker, renewed] }, REPLICATED)
      ) {
        entry.marker = renewed;
        entry.until = record.until as number;
      }
    } catch {
      // tried again with the next attempt to store the answer
    }
  }

  #scheduleRetry(): void {
    if (this.#retryTimer !== undefined) return;
    this.#retryTimer = setTimeout(() => {
      this.#retryTimer = undefined;
      for (const entry of this.#unstored.values()) if (!entry.busy) void this.#storeAnswer(entry);
    }, STORE_RETRY_MS);
    // The shutdown writes the queue (flush); the timer does not hold a process that ends otherwise.
    this.#retryTimer.unref();
  }

  /**
   * Writes the answers still waiting to be stored, at shutdown before the store closes: tries them
   * every {@link STORE_RETRY_MS} for at most `timeoutMs`.
   * @returns how many are still not stored (0: all stored).
   */
  async flush(timeoutMs = FLUSH_MS): Promise<number> {
    const deadline = this.#now() + timeoutMs;
    while (this.#unstored.size > 0 && this.#now() < deadline) {
      await Promise.all([...this.#unstored.values()].filter((entry) => !entry.busy).map((entry) => this.#storeAnswer(entry)));
      if (this.#unstored.size > 0) await sleep(STORE_RETRY_MS);
    }
    clearTimeout(this.#retryTimer);
    this.#retryTimer = undefined;
    return this.#unstored.size;
  }

  /**
   * Hands the answers still waiting to be stored to the other instances (at shutdown, after
   * {@link flush}): published in messages of at most {@link HAND_OFF_BATCH}; each receiving instance
   * queues them as its own, stores them as soon as the store takes them and replays them to repeats
   * meanwhile. A Redis that refuses writes (no replica acknowledging, `min-replicas-to-write`) still
   * relays them; with no other instance subscribed they are lost with this process.
   * @returns how many answers were published (0 when the store could not relay them).
   */
  async handOff(): Promise<number> {
    const answers: HandedAnswer[] = [...this.#unstored.values()].map((entry) => ({
      key: entry.storeKey,
      record: entry.record,
      marker: entry.marker,
      ttlMs: entry.ttlMs,
    }));
    let published = 0;
    for (let i = 0; i < answers.length; i += HAND_OFF_BATCH) {
      const batch = answers.slice(i, i + HAND_OFF_BATCH);
      try {
        await this.#store.publish({ type: 'answers', from: this.#instance, answers: batch });
        published += batch.length;
      } catch {
        break;
      }
    }
    return published;
  }

  /** Queues answers another instance handed off (its shutdown), as if this one had them: stored when the store takes them. */
  #adopt(answers: readonly HandedAnswer[]): void {
    for (const handed of answers) {
      if (this.#unstored.has(handed.key) || this.#unstored.size >= this.#maxUnstored) continue;
      const record = parseRecord(handed.record);
      const marker = parseRecord(handed.marker);
      if (record?.s !== 'done' || marker === undefined || marker.s === 'done') continue;
      this.#unstored.set(handed.key, {
        storeKey: handed.key,
        fingerprint: record.f,
        answer: answerOf(record),
        record: handed.record,
        ttlMs: handed.ttlMs,
        marker: handed.marker,
        until: marker.until ?? 0,
        busy: false,
      });
    }
    this.#scheduleRetry();
  }
}

function reused(): IdempotentAnswer {
  return {
    answer: { status: 422, body: envelope('idempotency_key_reused', 'This Idempotency-Key was used with another request body') },
    decision: 'mismatch',
  };
}

function inProgress(retryAfterSeconds: number): IdempotentAnswer {
  return {
    answer: {
      status: 409,
      body: envelope('request_in_progress', 'The same request is still in progress or its outcome is not known yet; retry later'),
    },
    decision: 'in_progress',
    retryAfterSeconds,
  };
}

function unavailable(): IdempotentAnswer {
  return {
    answer: { status: 503, body: envelope('idempotency_unavailable', 'Money moves are paused: the shared state cannot be reached') },
    decision: 'unavailable',
    retryAfterSeconds: UNAVAILABLE_RETRY_AFTER_S,
  };
}
