/**
 * What one sandbox server saw and what it was told to break: the ring of the last requests
 * (for tests that check what the proxy forwarded) and the fail-next rules (fault injection).
 *
 * @module
 */

/** The three sandbox servers. */
export type SandboxServerName = 'bff' | 'sticker' | 'external';

/** One request received by a sandbox server (admin routes under `/__sandbox/` are not recorded). */
export interface RecordedRequest {
  /** Increasing per server, from 1; survives {@link TrafficLog.clear}. */
  seq: number;
  /** Epoch milliseconds (sandbox clock). */
  at: number;
  server: SandboxServerName;
  method: string;
  /** Path and query string, as received. */
  url: string;
  /** Path without the query string. */
  path: string;
  /**
   * Request headers, lower-case names. `authorization` is redacted to `Bearer [redacted]`
   * (or `[redacted]` for another scheme): the token never leaves the sandbox.
   */
  headers: Record<string, string>;
  /** Whether an `Authorization` header was received. */
  authorization: boolean;
  /** User id of the Bearer token when it is a JWT signed by this sandbox (even expired), else null. */
  tokenUserId: number | null;
  /** Session id (`jti`) of that token, else null. */
  tokenSessionId: string | null;
  /** The `Cookie` header, unchanged, or null when absent. */
  cookie: string | null;
  /** Parsed JSON or form body, the text of another body, or null without a body. */
  body: unknown;
  /** Response status, once answered. */
  status: number | null;
  /** Whether a fail-next or fault rule produced the answer (instead of the real one). */
  injected: boolean;
  /** The kind of the fault rule (`faults.ts`) that delayed, held or failed the request, else null. */
  fault: 'slow' | 'hang' | 'fail' | 'answer' | null;
}

/** Filter of {@link TrafficLog.list}. */
export interface RequestFilter {
  method?: string;
  /** Exact path, or a prefix when it ends with `*`. */
  path?: string;
  /** Only requests with `seq` greater than this. */
  since?: number;
  /** Keep the last `limit` matches. */
  limit?: number;
}

/**
 * A fail-next rule: the next `times` requests matching `method` and `path` get this answer instead
 * of the real one (spec 7.3: every 401 family can be produced this way).
 *
 * @example { path: '/auth/user-profile', status: 401, body: { reason: 'ip_changed' } }
 */
export interface FailRuleInput {
  /** Any method when absent. */
  method?: string;
  /** Exact path (query ignored), or a prefix when it ends with `*`, or path plus exact query when it contains `?`. */
  path: string;
  /** HTTP status of the answer. Ignored with `action: 'reset'`. */
  status?: number;
  /** JSON body. */
  body?: unknown;
  /** Body sent byte for byte (wins over `body`); content type `text/plain` unless `contentType`. */
  rawBody?: string;
  contentType?: string;
  /** Extra response headers. */
  headers?: Record<string, string>;
  /** How many matching requests the rule answers. Default 1. */
  times?: number;
  /** Wait this long (milliseconds) before answering; with a large value, simulates a timeout. */
  delayMs?: number;
  /** `reset` destroys the connection without answering (upstream unavailable). Default `respond`. */
  action?: 'respond' | 'reset';
}

/** A stored rule. */
export interface FailRule extends FailRuleInput {
  id: number;
  /** Answers left. */
  remaining: number;
}

/** Validates an admin request body into a {@link FailRuleInput}; returns an error message otherwise. */
export function parseFailRule(value: unknown): FailRuleInput | string {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'body must be an object';
  const v = value as Record<string, unknown>;
  if (typeof v.path !== 'string' || !v.path.startsWith('/')) return 'path must be a string starting with /';
  if (v.method !== undefined && typeof v.method !== 'string') return 'method must be a string';
  const action = v.action ?? 'respond';
  if (action !== 'respond' && action !== 'reset') return 'action must be "respond" or "reset"';
  if (action === 'respond') {
    if (typeof v.status !== 'number' || !Number.isInteger(v.status) || v.status < 100 || v.status > 599) {
      return 'status must be an integer between 100 and 599';
    }
  }
  if (v.rawBody !== undefined && typeof v.rawBody !== 'string') return 'rawBody must be a string';
  if (v.contentType !== undefined && typeof v.contentType !== 'string') return 'contentType must be a string';
  if (v.times !== undefined && (typeof v.times !== 'number' || !Number.isInteger(v.times) || v.times < 1)) {
    return 'times must be a positive integer';
  }
  if (v.delayMs !== undefined && (typeof v.delayMs !== 'number' || v.delayMs < 0)) return 'delayMs must be a number >= 0';
  if (v.headers !== undefined) {
    if (typeof v.headers !== 'object' || v.headers === null) return 'headers must be an object of strings';
    for (const h of Object.values(v.headers)) if (typeof h !== 'string') return 'headers must be an object of strings';
  }
  return v as unknown as FailRuleInput;
}

/**
 * Whether a request matches a rule or filter path: exact path (query ignored), a prefix when the
 * pattern ends with `*`, or path plus exact query when the pattern contains `?`.
 *
 * @param url path and query string as received
 * @param path the path without the query string
 */
export function pathMatches(pattern: string, url: string, path: string): boolean {
  if (pattern.endsWith('*')) return path.startsWith(pattern.slice(0, -1));
  if (pattern.includes('?')) return url === pattern;
  return path === pattern;
}

/** Request ring and fail-next rules of one server. */
export class TrafficLog {
  /** Most requests kept. */
  static readonly capacity = 200;

  readonly server: SandboxServerName;
  #requests: RecordedRequest[] = [];
  #rules: FailRule[] = [];
  #seq = 0;
  #ruleSeq = 0;

  constructor(server: SandboxServerName) {
    this.server = server;
  }

  /** Adds a request (the ring drops the oldest past {@link TrafficLog.capacity}). */
  record(entry: Omit<RecordedRequest, 'seq' | 'server'>): RecordedRequest {
    const full: RecordedRequest = { ...entry, seq: ++this.#seq, server: this.server };
    this.#requests.push(full);
    if (this.#requests.length > TrafficLog.capacity) this.#requests.shift();
    return full;
  }

  /** Recorded requests, oldest first. */
  list(filter: RequestFilter = {}): RecordedRequest[] {
    const method = filter.method?.toUpperCase();
    let out = this.#requests.filter(
      (r) =>
        (method === undefined || r.method === method) &&
        (filter.path === undefined || pathMatches(filter.path, r.url, r.path)) &&
        (filter.since === undefined || r.seq > filter.since),
    );
    if (filter.limit !== undefined && filter.limit >= 0) out = out.slice(Math.max(0, out.length - filter.limit));
    return out;
  }

  /** The newest recorded request matching `filter`, if any. */
  last(filter: RequestFilter = {}): RecordedRequest | undefined {
    return this.list(filter).at(-1);
  }

  /** Highest `seq` handed out so far (use as `since` to see only later requests). */
  get lastSeq(): number {
    return this.#seq;
  }

  /** Adds a fail-next rule; rules are tried in the order they were added. */
  failNext(input: FailRuleInput): FailRule {
    const rule: FailRule = { ...input, id: ++this.#ruleSeq, remaining: input.times ?? 1 };
    this.#rules.push(rule);
    return rule;
  }

  /** Pending rules. */
  get rules(): readonly FailRule[] {
    return this.#rules;
  }

  /** Finds the first rule matching this request and uses up one of its answers. */
  take(method: string, url: string, path: string): FailRule | undefined {
    const index = this.#rules.findIndex(
      (r) => (r.method === undefined || r.method.toUpperCase() === method) && pathMatches(r.path, url, path),
    );
    if (index < 0) return undefined;
    const rule = this.#rules[index]!;
    rule.remaining -= 1;
    if (rule.remaining <= 0) this.#rules.splice(index, 1);
    return rule;
  }

  /** Drops every pending rule. */
  clearRules(): void {
    this.#rules = [];
  }

  /** Drops the recorded requests (sequence numbers keep increasing). */
  clearRequests(): void {
    this.#requests = [];
  }

  /** Drops requests and rules. */
  clear(): void {
    this.clearRules();
    this.clearRequests();
  }
}
