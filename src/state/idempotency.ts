/**
 * Money moves reach the upstream exactly once (docs/behaviour.md "Money moves: exactly once"; docs/architecture.md
 * "Habits" (habit 12)): `POST /api/payments/deposit` and `POST /api/payments/withdraw` go through
 * {@link Idempotency.run}, across every process and instance that share the {@link SharedStore}.
 *
 * - The key is the client's `Idempotency-Key` (1-255 visible ASCII characters; its answer is kept
 *   {@link HEADER_KEY_TTL_MS}), or without one the session plus the canonical body (kept
 *   {@link IMPLICIT_KEY_TTL_MS} after the first answer). Keys are scoped by the session and by the
 *   move, and kept only as SHA-256 digests.
 * - Before the upstream call a pending marker is written atomically (`SET NX PX`, lease
 *   `UPSTREAM_TIMEOUT_MS` + {@link LEASE_MARGIN_MS}; its value names the attempt); after it, the
 *   answer (any status) replaces it. Both are written `replicated` (docs/behaviour.md "Several
 *   instances"): the marker must be acknowledged by the configured number of replicas
 *   (`REDIS_MIN_REPLICAS_ACK`) before the call goes upstream — else the key is left free and the
 *   move answers 503 `idempotency_unavailable` — so that a replica promoted by a failover knows every
 *   move in flight.
 * - A repeat of a settled key replays the stored answer (`replayed`). A repeat while the first is in
 *   flight waits for it up to {@link WAIT_MS} and replays it, else answers 409 `request_in_progress`
 *   with `Retry-After`. The same header key with another body answers 422 `idempotency_key_reused`.
 * - An answer the store cannot take at once (a failover under way) is stored again every
 *   {@link STORE_RETRY_MS} in the background until the marker's lease ends (meanwhile repeats
 *   answer 409, afterwards they replay it), then for {@link STORE_GRACE_MS} more where the key is free.
 * - An unknown outcome (time-out, connection broken after the request may have left) stores nothing:
 *   the marker stays until its lease ends, then a repeat goes upstream again with the same
 *   `Idempotency-Key`, so that the BFF's own idempotency decides. A call that certainly never left
 *   (connection refused, service not configured) frees the key at once.
 * - The store unreachable (or no replica acknowledging the marker): 503 `idempotency_unavailable`,
 *   nothing sent upstream.
 * - Stored answers hold no credential: the session JWT is removed from the body before it is kept.
 *
 * @module
 */
import { hash, randomUUID } from 'node:crypto';
import { envelope, type ProxyAnswer } from '../envelope.js';
import { REFUSALS, UpstreamError } from '../upstream/errors.js';
import { KEY_PREFIX, type SharedStore, StateUnavailableError } from './store.js';

/** How long the answer of a submission with an `Idempotency-Key` header is replayed (24 h), in milliseconds. */
export const HEADER_KEY_TTL_MS = 24 * 60 * 60 * 1000;
/** How long the answer of a submission without one is replayed (5 s), in milliseconds. */
export const IMPLICIT_KEY_TTL_MS = 5_000;
/** The pending marker's lease beyond the upstream time limit, in milliseconds. */
export const LEASE_MARGIN_MS = 5_000;
/** Longest wait of a repeat for the first submission's answer before 409, in milliseconds. */
export const WAIT_MS = 3_000;
/** Pause between two attempts to store an answer the store refused (a failover under way), in milliseconds. */
export const STORE_RETRY_MS = 250;
/** How long after the marker's lease an answer the store refused is still tried (only where the key is free), in milliseconds. */
export const STORE_GRACE_MS = 60_000;
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
  /** The client's `Idempotency-Key`, when it sent one (already checked against {@link IDEMPOTENCY_KEY_PATTERN}). */
  readonly key: string | undefined;
  /** The canonical text of the upstream body: equal submissions give equal text. */
  readonly body: string;
}

/** The answer to a submission and how it was decided. */
export interface IdempotentAnswer {
  readonly answer: ProxyAnswer;
  readonly decision: IdempotencyDecision;
  /** With `in_progress`: when to try again, in seconds (the `Retry-After` header). */
  readonly retryAfterSeconds?: number;
}

interface PendingRecord {
  /** `pending`: in flight; `unknown`: its outcome is unknown, the lease runs out at `until` (epoch ms). */
  s: 'pending' | 'unknown';
  f: string;
  until?: number;
  /**
   * `pending`: the attempt that wrote it (a random UUID), so that deleting it again can only remove
   * this attempt's own marker, never another instance's marker for the same key and body.
   */
  a?: string;
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

/** True when the call certainly never reached the upstream. */
function neverSent(error: unknown): boolean {
  if (!(error instanceof UpstreamError)) return false;
  // The proxy's own refusals (not configured, the endpoint's guard: busy, circuit open) send nothing.
  if (REFUSALS.has(error.code)) return true;
  const cause = (error.cause as { code?: unknown } | undefined)?.code;
  return cause === 'ECONNREFUSED' || cause === 'UND_ERR_CONNECT_TIMEOUT' || cause === 'ENOTFOUND';
}

/** See the module documentation. */
export class Idempotency {
  readonly #store: SharedStore;
  readonly #leaseMs: number;
  readonly #waitMs: number;
  /** Submissions in flight in this process: a repeat here waits on the promise, not on the store. */
  readonly #inFlight = new Map<string, { fingerprint: string; promise: Promise<ProxyAnswer> }>();

  readonly #onDecision: ((decision: IdempotencyDecision) => void) | undefined;

  /**
   * @param upstreamTimeoutMs - the upstream time limit; the pending marker's lease is this plus {@link LEASE_MARGIN_MS}.
   * @param options.waitMs - longest wait for a repeat's first submission, in milliseconds; default {@link WAIT_MS}.
   * @param options.onDecision - told each decision as it is taken (the metrics): `forwarded` before the
   *   upstream call, so that a call that then fails still counts; the others when {@link run} answers.
   */
  constructor(
    store: SharedStore,
    upstreamTimeoutMs: number,
    options: { waitMs?: number; onDecision?: ((decision: IdempotencyDecision) => void) | undefined } = {},
  ) {
    this.#store = store;
    this.#leaseMs = upstreamTimeoutMs + LEASE_MARGIN_MS;
    this.#waitMs = options.waitMs ?? WAIT_MS;
    this.#onDecision = options.onDecision;
  }

  /** Submissions in flight in this process. */
  get inFlight(): number {
    return this.#inFlight.size;
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
    const scope = `${submission.move}\n${sha256(submission.token)}`;
    const fingerprint = sha256(submission.body);
    const storeKey = `${KEY_PREFIX}idem:${sha256(submission.key === undefined ? `body\n${scope}\n${submission.body}` : `key\n${scope}\n${submission.key}`)}`;
    const ttlMs = submission.key === undefined ? IMPLICIT_KEY_TTL_MS : HEADER_KEY_TTL_MS;
    const deadline = Date.now() + this.#waitMs;
    for (let pause = 25; ; pause = Math.min(pause * 2, 250)) {
      const local = this.#inFlight.get(storeKey);
      if (local) {
        if (local.fingerprint !== fingerprint) return reused();
        try {
          return { answer: await local.promise, decision: 'replayed' };
        } catch {
          return inProgress(Math.ceil(this.#leaseMs / 1000));
        }
      }
      let existing: StoredRecord | undefined;
      try {
        const marker = JSON.stringify({ s: 'pending', f: fingerprint, a: randomUUID() } satisfies PendingRecord);
        const previous = await this.#store.setIfAbsent(storeKey, marker, this.#leaseMs, REPLICATED);
        if (previous === null) {
          this.#onDecision?.('forwarded');
          return { answer: await this.#forward(storeKey, fingerprint, marker, ttlMs, submission, call), decision: 'forwarded' };
        }
        existing = parseRecord(previous);
      } catch (error) {
        if (error instanceof StateUnavailableError) return unavailable();
        throw error;
      }
      if (existing && existing.f !== fingerprint) return reused();
      if (existing?.s === 'done') return { answer: answerOf(existing), decision: 'replayed' };
      if (existing?.s === 'unknown') return inProgress(Math.max(1, Math.ceil(((existing.until ?? 0) - Date.now()) / 1000)));
      if (Date.now() >= deadline) return inProgress(1);
      await sleep(pause);
    }
  }

  /**
   * Tries again every {@link STORE_RETRY_MS} to store an answer the store refused. Until the marker's
   * lease ends at `until` (epoch ms), the answer replaces the marker; after it, for at most
   * {@link STORE_GRACE_MS} more, it is written only where the key is free (`setIfAbsent`), never over
   * a later attempt's marker. (A Redis primary left without its replica by a planned switchover
   * refuses every write for as long as the sentinels take to give it one — about 15 s with one
   * replica —, which may outlast a short lease: the marker ends meanwhile, a repeat is refused 503 as
   * long as writes are, and the answer is stored as soon as they are accepted again.)
   */
  #storeLater(storeKey: string, record: string, ttlMs: number, until: number): void {
    const attempt = () => {
      if (Date.now() + STORE_RETRY_MS >= until + STORE_GRACE_MS) return;
      setTimeout(() => {
        const write =
          Date.now() < until
            ? this.#store.set(storeKey, record, ttlMs, REPLICATED)
            : this.#store.setIfAbsent(storeKey, record, ttlMs, REPLICATED).then(() => undefined);
        write.catch(attempt);
      }, STORE_RETRY_MS).unref();
    };
    attempt();
  }

  async #forward(
    storeKey: string,
    fingerprint: string,
    marker: string,
    ttlMs: number,
    submission: Submission,
    call: (upstreamKey: string) => Promise<ProxyAnswer>,
  ): Promise<ProxyAnswer> {
    const upstreamKey = submission.key ?? storeKey.slice(storeKey.lastIndexOf(':') + 1);
    const until = Date.now() + this.#leaseMs;
    const promise = call(upstreamKey);
    this.#inFlight.set(storeKey, { fingerprint, promise });
    try {
      const answer = await promise;
      // Kept whatever its status: a repeat replays it. A store that fails now (a failover under way)
      // leaves the marker, whose lease answers repeats 409: the answer is stored again in the
      // background until the lease ends, so that a repeat after the failover replays it.
      const record = JSON.stringify(doneRecord(fingerprint, answer, submission.token));
      await this.#store.set(storeKey, record, ttlMs, REPLICATED).catch(() => this.#storeLater(storeKey, record, ttlMs, until));
      return answer;
    } catch (error) {
      if (neverSent(error)) {
        await this.#store.deleteIfEquals(storeKey, marker).catch(() => {});
      } else {
        // Unknown outcome: repeats answer 409 at once, until the lease ends.
        const left = until - Date.now();
        if (left > 0) await this.#store.set(storeKey, JSON.stringify({ s: 'unknown', f: fingerprint, until }), left, REPLICATED).catch(() => {});
      }
      throw error;
    } finally {
      this.#inFlight.delete(storeKey);
    }
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
    answer: { status: 409, body: envelope('request_in_progress', 'The same request is still in progress or its outcome is not known yet; retry later') },
    decision: 'in_progress',
    retryAfterSeconds,
  };
}

function unavailable(): IdempotentAnswer {
  return {
    answer: { status: 503, body: envelope('idempotency_unavailable', 'Money moves are paused: the shared state cannot be reached') },
    decision: 'unavailable',
  };
}
