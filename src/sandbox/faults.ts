/**
 * Persistent faults of one sandbox server: "this endpoint is slow", "this endpoint hangs", "this
 * endpoint fails", "this endpoint's real answer comes compressed without being asked, truncated, or
 * empty" (what a CDN or a broken BFF sends; docs/behaviour.md "Upstream answers"). Unlike a fail-next rule, which answers a counted number of requests, a fault
 * rule stays until it is removed (`DELETE /__sandbox/faults`, `POST /__sandbox/reset`), so that the
 * proxy's per-endpoint isolation and circuit breakers can be watched against it.
 *
 * Requests a rule delays or hangs are *held*: each waits on its own gate, released when its delay
 * is over, when its client goes away, when its rule is removed or replaced (it then gets the real
 * answer at once), or when the server closes (its connection is destroyed). Everything is bounded:
 * {@link FaultLimits}.
 *
 * @example
 * ```ts
 * const faults = sandbox.store.faults.bff;            // or POST {bff}/__sandbox/faults
 * faults.add([{ method: 'GET', path: '/users/wallet', hang: true }]);
 * // … the proxy's wallet calls hang; faults.heldCount counts them …
 * faults.remove({ path: '/users/wallet' });           // they get their real answer now
 * ```
 *
 * @module
 */
import type { ServerResponse } from 'node:http';
import { pathMatches } from './traffic.js';

/** What a rule does: answer late, never answer, answer a failure status, or spoil the real answer. */
export type FaultKind = 'slow' | 'hang' | 'fail' | 'answer';

/**
 * How an `answer` rule spoils the real answer: `compressed` (coded with `coding` although the caller
 * asked for `identity`), `truncated` (its first half, declared as such), `empty` (same status, no body),
 * `drifted` (a JSON answer whose `field` is renamed, dropped or of another type, as a BFF that
 * changed its contract sends it: see {@link DriftKind}).
 */
export const ANSWER_FAULTS = ['compressed', 'truncated', 'empty', 'drifted'] as const;
export type AnswerFault = (typeof ANSWER_FAULTS)[number];

/** The codings a `compressed` answer rule may use. */
export const ANSWER_CODINGS = ['gzip', 'deflate', 'br'] as const;
export type AnswerCoding = (typeof ANSWER_CODINGS)[number];

/**
 * How a `drifted` answer changes its field: `type` (default: another JSON type, or the rule's `value`),
 * `rename` (the field moves to `<name>_renamed`), `drop` (the field is left out).
 */
export const DRIFT_KINDS = ['type', 'rename', 'drop'] as const;
export type DriftKind = (typeof DRIFT_KINDS)[number];

/** A drifted field: dot-separated names, `[]` after a name for every item of an array (`user.id`, `data[].slug`). */
const DRIFT_FIELD = /^[A-Za-z0-9_$-]{1,64}(\[\])?(\.[A-Za-z0-9_$-]{1,64}(\[\])?){0,15}$/;

/** Bounds of the fault rules of one server. */
export interface FaultLimits {
  /** Most rules at once; more answer 400 `too_many_rules`. Default 50. */
  maxRules: number;
  /** Longest `delayMs`, in milliseconds; more answer 400 `invalid_rule`. Default 120 000. */
  maxDelayMs: number;
  /**
   * Most requests held at once (delayed or hung) on the server; the connection of a request that
   * would be held beyond it is destroyed at once (an overwhelmed upstream refusing work). Default 1000.
   */
  maxHeldRequests: number;
  /** Longest `body` (as JSON) or `rawBody` of a rule, in characters. Default 65 536. */
  maxBodyChars: number;
}

/** The default {@link FaultLimits}. */
export const DEFAULT_FAULT_LIMITS: Readonly<FaultLimits> = Object.freeze({
  maxRules: 50,
  maxDelayMs: 120_000,
  maxHeldRequests: 1000,
  maxBodyChars: 65_536,
});

/**
 * A fault rule as posted to `POST /__sandbox/faults`. Exactly one behaviour:
 *
 * - slow: `{ path, delayMs }`, the real answer after `delayMs` milliseconds;
 * - hang: `{ path, hang: true }`, no answer until the client gives up or the rule goes;
 * - fail: `{ path, status, body?, rawBody?, contentType?, headers?, delayMs? }`, that answer
 *   (after `delayMs` when given) instead of the real one;
 * - answer: `{ path, answer: 'compressed' | 'truncated' | 'empty', coding?, delayMs? }`, the real answer
 *   spoilt ({@link AnswerFault}; `coding` `gzip` by default, `deflate` or `br`);
 * - drift: `{ path, answer: 'drifted', field, drift?, value? }`, the real JSON answer with `field`
 *   changed ({@link DriftKind}; `value`: what a `type` drift puts in the field).
 *
 * @example { path: '/users/wallet', delayMs: 8000 }
 * @example { method: 'GET', path: '/casino-games/list/*', hang: true }
 * @example { path: '/auth/user-profile', status: 503, body: { message: 'down' } }
 * @example { path: '/auth/user-profile', answer: 'compressed', coding: 'br' }
 * @example { path: '/auth/user-profile', answer: 'drifted', field: 'user.id' }
 */
export interface FaultRuleInput {
  /** Any method when absent; stored upper-case. */
  method?: string;
  /** Exact path (query ignored), a prefix when it ends with `*`, or path plus exact query when it contains `?`. */
  path: string;
  /** Milliseconds before answering, 0 to {@link FaultLimits.maxDelayMs}. */
  delayMs?: number;
  /** `true`: never answer while the rule stands. Not with `delayMs` or `status`. */
  hang?: boolean;
  /** HTTP status of the failure answer, 100–599. */
  status?: number;
  /** JSON body of the failure answer. */
  body?: unknown;
  /** Body sent byte for byte (wins over `body`); content type `text/plain` unless `contentType`. */
  rawBody?: string;
  contentType?: string;
  /** Extra response headers of the failure answer. */
  headers?: Record<string, string>;
  /** Spoil the real answer (not with `hang` or `status`). */
  answer?: AnswerFault;
  /** The coding of a `compressed` answer; default `gzip`. */
  coding?: AnswerCoding;
  /** The field a `drifted` answer changes: `user.id`, `data[].slug`. */
  field?: string;
  /** How a `drifted` answer changes it; default `type`. */
  drift?: DriftKind;
  /** For a `type` drift: the JSON value put in the field (default: another type made from the real value). */
  value?: unknown;
}

/** A stored rule, as listed by `GET /__sandbox/faults`. */
export interface FaultRule extends FaultRuleInput {
  /** Increasing per server, from 1. */
  id: number;
  kind: FaultKind;
  /** Epoch milliseconds (wall clock) when it was added. */
  createdAt: number;
  /** Requests it has matched so far. */
  hits: number;
  /** Requests it holds now (delayed or hung). */
  held: number;
}

/**
 * How a held request ends:
 * `elapsed` (its delay is over: apply the rule), `released` (its rule was removed or replaced: the
 * real answer), `gone` (its client disconnected), `refused` (over {@link FaultLimits.maxHeldRequests},
 * its connection destroyed), `closed` (the server is closing, its connection destroyed).
 */
export type HoldOutcome = 'elapsed' | 'released' | 'gone' | 'refused' | 'closed';

/** A request matched by a rule: the rule as it was, and when to go on. */
export interface FaultMatch {
  /** A copy of the rule. */
  rule: FaultRule;
  /** Settles when the request may go on (never rejects). Immediate `elapsed` for a fail rule without delay. */
  outcome: Promise<HoldOutcome>;
}

interface Held {
  settle(outcome: HoldOutcome): void;
}

interface StoredRule {
  rule: FaultRule;
  held: Set<Held>;
}

const FIELDS = new Set([
  'method',
  'path',
  'delayMs',
  'hang',
  'status',
  'body',
  'rawBody',
  'contentType',
  'headers',
  'answer',
  'coding',
  'field',
  'drift',
  'value',
]);
const FAILURE_FIELDS = ['body', 'rawBody', 'contentType', 'headers'] as const;

/**
 * Validates an admin request body into a {@link FaultRuleInput}.
 *
 * @param value the parsed JSON body (one rule)
 * @param limits bounds to check `delayMs` and the body sizes against
 * @returns the rule, or a message for a 400 `invalid_rule`
 */
export function parseFaultRule(value: unknown, limits: Readonly<FaultLimits> = DEFAULT_FAULT_LIMITS): FaultRuleInput | string {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'a rule must be an object';
  const v = value as Record<string, unknown>;
  const unknown = Object.keys(v).find((key) => !FIELDS.has(key));
  if (unknown !== undefined) return `unknown field ${JSON.stringify(unknown.slice(0, 40))}`;
  if (typeof v.path !== 'string' || !v.path.startsWith('/') || v.path.length > 2048) {
    return 'path must be a string starting with / (at most 2048 characters)';
  }
  if (v.method !== undefined && (typeof v.method !== 'string' || !/^[A-Za-z]{1,16}$/.test(v.method))) {
    return 'method must be an HTTP method name';
  }
  if (v.hang !== undefined && typeof v.hang !== 'boolean') return 'hang must be a boolean';
  if (v.delayMs !== undefined) {
    if (typeof v.delayMs !== 'number' || !Number.isInteger(v.delayMs) || v.delayMs < 0 || v.delayMs > limits.maxDelayMs) {
      return `delayMs must be an integer from 0 to ${limits.maxDelayMs}`;
    }
  }
  if (v.status !== undefined && (typeof v.status !== 'number' || !Number.isInteger(v.status) || v.status < 100 || v.status > 599)) {
    return 'status must be an integer between 100 and 599';
  }
  if (v.hang === true && (v.delayMs !== undefined || v.status !== undefined)) return 'hang cannot be combined with delayMs or status';
  if (v.answer !== undefined) {
    if (!(ANSWER_FAULTS as readonly unknown[]).includes(v.answer)) return `answer must be one of ${ANSWER_FAULTS.join(', ')}`;
    if (v.hang === true || v.status !== undefined) return 'answer cannot be combined with hang or status';
  }
  if (v.coding !== undefined) {
    if (v.answer !== 'compressed') return 'coding needs answer: "compressed"';
    if (!(ANSWER_CODINGS as readonly unknown[]).includes(v.coding)) return `coding must be one of ${ANSWER_CODINGS.join(', ')}`;
  }
  if (v.answer === 'drifted') {
    if (typeof v.field !== 'string' || !DRIFT_FIELD.test(v.field)) return 'field must be a JSON path such as user.id or data[].slug';
    if (v.drift !== undefined && !(DRIFT_KINDS as readonly unknown[]).includes(v.drift))
      return `drift must be one of ${DRIFT_KINDS.join(', ')}`;
    if (v.value !== undefined && v.drift !== undefined && v.drift !== 'type') return 'value needs drift: "type"';
  } else {
    const extra = (['field', 'drift', 'value'] as const).find((key) => v[key] !== undefined);
    if (extra !== undefined) return `${extra} needs answer: "drifted"`;
  }
  if (v.hang !== true && v.delayMs === undefined && v.status === undefined && v.answer === undefined) {
    return 'a fault needs delayMs, hang: true, status or answer';
  }
  if (v.status === undefined) {
    const extra = FAILURE_FIELDS.find((key) => v[key] !== undefined);
    if (extra !== undefined) return `${extra} needs a status`;
  }
  if (v.rawBody !== undefined && typeof v.rawBody !== 'string') return 'rawBody must be a string';
  if (v.contentType !== undefined && (typeof v.contentType !== 'string' || v.contentType.length > 200)) {
    return 'contentType must be a string';
  }
  if (v.headers !== undefined) {
    if (typeof v.headers !== 'object' || v.headers === null || Array.isArray(v.headers)) return 'headers must be an object of strings';
    for (const h of Object.values(v.headers)) if (typeof h !== 'string') return 'headers must be an object of strings';
  }
  const bodyChars =
    (typeof v.rawBody === 'string' ? v.rawBody.length : 0) +
    (v.body === undefined ? 0 : JSON.stringify(v.body).length) +
    (v.value === undefined ? 0 : JSON.stringify(v.value).length);
  if (bodyChars > limits.maxBodyChars) return `body and rawBody must stay under ${limits.maxBodyChars} characters`;

  const input: FaultRuleInput = { path: v.path };
  if (typeof v.method === 'string') input.method = v.method.toUpperCase();
  if (v.hang === true) input.hang = true;
  if (typeof v.delayMs === 'number') input.delayMs = v.delayMs;
  if (typeof v.status === 'number') input.status = v.status;
  if (v.body !== undefined) input.body = v.body;
  if (typeof v.rawBody === 'string') input.rawBody = v.rawBody;
  if (typeof v.contentType === 'string') input.contentType = v.contentType;
  if (v.headers !== undefined) input.headers = { ...(v.headers as Record<string, string>) };
  if (v.answer !== undefined) input.answer = v.answer as AnswerFault;
  if (v.coding !== undefined) input.coding = v.coding as AnswerCoding;
  if (typeof v.field === 'string') input.field = v.field;
  if (v.drift !== undefined) input.drift = v.drift as DriftKind;
  if (v.value !== undefined) input.value = v.value;
  return input;
}

/** A value of another JSON type than `value`, made from it (a number as its text, a text as a number…). */
function retyped(value: unknown): unknown {
  if (typeof value === 'number') return String(value);
  if (typeof value === 'string') return value.length;
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (value === null || value === undefined) return 0;
  return JSON.stringify(value);
}

/**
 * The JSON value `answer` with the field at `field` (`user.id`, `data[].slug`: every item) drifted as
 * `drift` says; a path that is not there leaves the answer as it is. Pure: `answer` is not changed.
 */
export function driftAnswer(answer: unknown, field: string, drift: DriftKind = 'type', value?: unknown): unknown {
  const steps = field
    .split('.')
    .map((part) => (part.endsWith('[]') ? { name: part.slice(0, -2), each: true } : { name: part, each: false }));
  const walk = (node: unknown, at: number): unknown => {
    const step = steps[at];
    if (step === undefined || node === null || typeof node !== 'object' || Array.isArray(node) || !(step.name in node)) return node;
    const copy: Record<string, unknown> = { ...(node as Record<string, unknown>) };
    const current = copy[step.name];
    if (at < steps.length - 1 || step.each) {
      const last = at === steps.length - 1;
      if (step.each) {
        if (!Array.isArray(current)) return node;
        copy[step.name] = last ? current.map((item) => drifted(item)) : current.map((item) => walk(item, at + 1));
      } else {
        copy[step.name] = walk(current, at + 1);
      }
      return copy;
    }
    if (drift === 'drop') delete copy[step.name];
    else if (drift === 'rename') {
      delete copy[step.name];
      copy[`${step.name}_renamed`] = current;
    } else copy[step.name] = value === undefined ? retyped(current) : value;
    return copy;
  };
  // `field` ending in `[]`: every item of the array is replaced (renaming or dropping an item has no meaning: retyped).
  const drifted = (item: unknown): unknown => (value === undefined ? retyped(item) : value);
  return walk(answer, 0);
}

function kindOf(input: FaultRuleInput): FaultKind {
  if (input.hang === true) return 'hang';
  if (input.answer !== undefined) return 'answer';
  return input.status !== undefined ? 'fail' : 'slow';
}

function sameTarget(a: FaultRuleInput, b: FaultRuleInput): boolean {
  return a.path === b.path && (a.method ?? '*') === (b.method ?? '*');
}

/** Thrown by {@link FaultRules.add} when the rules would exceed {@link FaultLimits.maxRules}. */
export class TooManyFaultRulesError extends Error {
  constructor(max: number) {
    super(`at most ${max} fault rules per server`);
    this.name = 'TooManyFaultRulesError';
  }
}

/** The fault rules of one server and the requests they hold. */
export class FaultRules {
  readonly limits: Readonly<FaultLimits>;
  #rules: StoredRule[] = [];
  #seq = 0;
  #heldCount = 0;

  constructor(limits: Partial<FaultLimits> = {}) {
    this.limits = Object.freeze({ ...DEFAULT_FAULT_LIMITS, ...limits });
  }

  /**
   * Adds rules, all or none. A rule for the same `method` (or any) and `path` as a standing one
   * replaces it; the requests the old one held get their real answer at once.
   *
   * @returns the stored rules, in order
   * @throws {TooManyFaultRulesError} when the rules would exceed {@link FaultLimits.maxRules}
   */
  add(inputs: readonly FaultRuleInput[]): FaultRule[] {
    const kept = this.#rules.filter((stored) => !inputs.some((input) => sameTarget(stored.rule, input)));
    const fresh = inputs.filter((input, i) => !inputs.slice(i + 1).some((later) => sameTarget(input, later)));
    if (kept.length + fresh.length > this.limits.maxRules) throw new TooManyFaultRulesError(this.limits.maxRules);
    const replaced = this.#rules.filter((stored) => !kept.includes(stored));
    const added = fresh.map((input) => ({
      rule: { ...input, id: ++this.#seq, kind: kindOf(input), createdAt: Date.now(), hits: 0, held: 0 },
      held: new Set<Held>(),
    }));
    this.#rules = [...kept, ...added];
    for (const stored of replaced) this.#release(stored, 'released');
    return added.map((stored) => this.#snapshot(stored));
  }

  /** The standing rules, oldest first, with their counters. */
  list(): FaultRule[] {
    return this.#rules.map((stored) => this.#snapshot(stored));
  }

  /** Requests held now (delayed or hung), over every rule. */
  get heldCount(): number {
    return this.#heldCount;
  }

  /**
   * Removes rules; the requests they hold get their real answer at once.
   *
   * @param filter `path` (the rule's pattern as written) and/or `method`; every rule when empty
   * @returns how many rules went and how many held requests were released
   */
  remove(filter: { path?: string; method?: string } = {}): { removed: number; released: number } {
    const method = filter.method?.toUpperCase();
    const gone = this.#rules.filter(
      (stored) =>
        (filter.path === undefined || stored.rule.path === filter.path) && (method === undefined || (stored.rule.method ?? '*') === method),
    );
    this.#rules = this.#rules.filter((stored) => !gone.includes(stored));
    let released = 0;
    for (const stored of gone) released += this.#release(stored, 'released');
    return { removed: gone.length, released };
  }

  /** Removes every rule (sandbox reset); held requests get their real answer. */
  clear(): void {
    this.remove();
  }

  /**
   * The server is closing: every held request's connection is destroyed and its gate settles
   * `closed`. The rules stay (the store may outlive the server).
   */
  closeAll(): void {
    for (const stored of this.#rules) this.#release(stored, 'closed');
  }

  /**
   * The first standing rule matching a request, if any; counts the hit and holds the request when
   * the rule delays or hangs.
   *
   * @param res the request's response: its `close` (client gone) ends the hold; its socket is
   *   destroyed when the request is refused or the server closes
   */
  match(method: string, url: string, path: string, res: ServerResponse): FaultMatch | undefined {
    const upper = method.toUpperCase();
    const stored = this.#rules.find((s) => (s.rule.method === undefined || s.rule.method === upper) && pathMatches(s.rule.path, url, path));
    if (!stored) return undefined;
    stored.rule.hits += 1;
    const rule = this.#snapshot(stored);
    if ((rule.kind === 'fail' || rule.kind === 'answer') && !rule.delayMs) return { rule, outcome: Promise.resolve('elapsed') };
    if (this.#heldCount >= this.limits.maxHeldRequests) {
      res.socket?.destroy();
      return { rule, outcome: Promise.resolve('refused') };
    }
    return { rule, outcome: this.#hold(stored, res) };
  }

  #hold(stored: StoredRule, res: ServerResponse): Promise<HoldOutcome> {
    return new Promise<HoldOutcome>((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const onClose = (): void => held.settle('gone');
      const held: Held = {
        settle: (outcome) => {
          if (!stored.held.delete(held)) return; // settled already
          this.#heldCount -= 1;
          if (timer !== undefined) clearTimeout(timer);
          res.off('close', onClose);
          if (outcome === 'closed') res.socket?.destroy();
          resolve(outcome);
        },
      };
      stored.held.add(held);
      this.#heldCount += 1;
      res.once('close', onClose);
      if (!res.socket || res.socket.destroyed) {
        held.settle('gone'); // the client left before the hold began
        return;
      }
      if (stored.rule.hang !== true) {
        timer = setTimeout(() => held.settle('elapsed'), stored.rule.delayMs ?? 0);
        timer.unref();
      }
    });
  }

  #release(stored: StoredRule, outcome: HoldOutcome): number {
    const all = [...stored.held];
    for (const held of all) held.settle(outcome);
    return all.length;
  }

  #snapshot(stored: StoredRule): FaultRule {
    return { ...stored.rule, held: stored.held.size };
  }
}
