/**
 * Sampled live checks of the BFF's answers (docs/behaviour.md "Operations", "Upstream contract
 * checks"; `UPSTREAM_CONTRACT_SAMPLE`): a share of the BFF's buffered 2xx answers is held to the shapes
 * the doctor uses (`src/contracts/upstream-answers.ts`, judged by `src/contracts/conformance.ts`), so an
 * operator learns within a minute which endpoint drifted and which field.
 *
 * Off the request's path, and never changing an answer: the upstream observer ({@link observe}) only
 * draws the sample and puts a reference to the answer's bytes in a bounded queue (no copy, no parse);
 * the checks run in later turns of the event loop (`setImmediate`), a few per turn, after the
 * answer's route has gone on with it. A full queue drops the answer unchecked (nothing is counted for
 * it). The bytes are only read.
 *
 * What an operator sees: `upstream_contract_checks_total{endpoint}` per answer checked,
 * `upstream_contract_findings_total{endpoint,kind}` once per answer and kind found, and a log line
 * (`event: "upstream-contract"`, EP code, JSON path, kind; `warn`, `info` for an `extra` field) at most
 * once a minute per endpoint, path and kind. Neither ever holds a value of the answer.
 *
 * @example
 * const checks = new UpstreamContractChecks({ sample: 0.01, log: app.log, report: metrics });
 * createUpstreamServices(config, { observer: joinObservers(metrics.observeUpstream, checks.observe) });
 *
 * @module
 */
import { CONTRACT_FINDING_KINDS, type ContractFindingKind, checkAnswerBody, contractFindingText } from '../contracts/conformance.js';
import { UPSTREAM_ANSWER_EXPECTATIONS } from '../contracts/upstream-answers.js';
import { type EndpointCode, UNKNOWN_ENDPOINT_CODE } from '../errors/index.js';
import type { UpstreamCallRecord, UpstreamObserver } from '../upstream/client.js';

/** The service whose answers are checked: the BFF (the other upstreams have no shapes in the specification). */
const CHECKED_SERVICE = 'BFF_BASE_URL';

/** Where the checks' counts go (the metrics; `Metrics` implements it). */
export interface ContractCheckReport {
  /** One answer of `endpoint` checked (`upstream_contract_checks_total`). */
  contractChecked(endpoint: EndpointCode): void;
  /** One answer of `endpoint` with at least one finding of `kind` (`upstream_contract_findings_total`). */
  contractFinding(endpoint: EndpointCode, kind: ContractFindingKind): void;
}

/** The log the findings are written to (a pino logger). */
export interface ContractLog {
  warn(fields: Record<string, unknown>, message: string): void;
  info(fields: Record<string, unknown>, message: string): void;
}

/** Bounds of the checks (defaults in {@link CONTRACT_CHECK_LIMITS}). */
export interface ContractCheckLimits {
  /** Most answers waiting to be checked; more are dropped unchecked. */
  readonly queueEntries: number;
  /** Most bytes of answers waiting to be checked; an answer that would pass it is dropped unchecked. */
  readonly queueBytes: number;
  /** Most answers checked in one turn of the event loop before yielding. */
  readonly perTurn: number;
  /** Most endpoint, path and kind keys remembered for the log's once-a-minute rule. */
  readonly logKeys: number;
  /** Time between two log lines of one endpoint, path and kind, in ms. */
  readonly logIntervalMs: number;
}

/** The default bounds: 64 answers or 8 MiB waiting, 4 checked per turn, 1 024 log keys, one line a minute. */
export const CONTRACT_CHECK_LIMITS: Readonly<ContractCheckLimits> = Object.freeze({
  queueEntries: 64,
  queueBytes: 8 * 1024 * 1024,
  perTurn: 4,
  logKeys: 1_024,
  logIntervalMs: 60_000,
});

/** Options of {@link UpstreamContractChecks}. */
export interface ContractCheckOptions {
  /** Share of the BFF's 2xx answers checked, above 0 and at most 1 (`UPSTREAM_CONTRACT_SAMPLE`). */
  readonly sample: number;
  readonly log: ContractLog;
  /** The metrics; omit without `METRICS_PORT` (the log line still comes). */
  readonly report?: ContractCheckReport | undefined;
  /** Draws the sample, in [0, 1); default `Math.random`. */
  readonly random?: (() => number) | undefined;
  /** Clock of the log's once-a-minute rule, in ms; default `performance.now`. */
  readonly now?: (() => number) | undefined;
  readonly limits?: Partial<ContractCheckLimits> | undefined;
}

interface Waiting {
  /** The call's EP code, as the upstream client found it. */
  readonly endpoint: EndpointCode;
  readonly body: Buffer;
}

/** The live checks of one app (see the module documentation). */
export class UpstreamContractChecks {
  readonly #sample: number;
  readonly #log: ContractLog;
  readonly #report: ContractCheckReport | undefined;
  readonly #random: () => number;
  readonly #now: () => number;
  readonly #limits: ContractCheckLimits;
  readonly #queue: Waiting[] = [];
  #queuedBytes = 0;
  #immediate: NodeJS.Immediate | undefined;
  /** When each endpoint, path and kind was last logged (insertion order: oldest first). */
  readonly #logged = new Map<string, number>();
  /** Answers dropped because the queue was full, and log lines left out because the log's memory was full (tests, diagnostics). */
  dropped = 0;
  unlogged = 0;

  /** @throws RangeError when `sample` is not in (0, 1]. */
  constructor(options: ContractCheckOptions) {
    if (!(options.sample > 0 && options.sample <= 1)) throw new RangeError('sample must be above 0 and at most 1');
    this.#sample = options.sample;
    this.#log = options.log;
    this.#report = options.report;
    this.#random = options.random ?? Math.random;
    this.#now = options.now ?? (() => performance.now());
    this.#limits = { ...CONTRACT_CHECK_LIMITS, ...options.limits };
  }

  /** Answers waiting to be checked. */
  get waiting(): number {
    return this.#queue.length;
  }

  /**
   * The upstream observer: a BFF 2xx buffered answer drawn in the sample is queued for a check; nothing
   * else is done on the call's path. A full queue drops it.
   */
  readonly observe: UpstreamObserver = (call: UpstreamCallRecord): void => {
    const body = call.body;
    if (body === undefined || call.status < 200 || call.status > 299 || call.service !== CHECKED_SERVICE) return;
    if (this.#sample < 1 && this.#random() >= this.#sample) return;
    if (this.#queue.length >= this.#limits.queueEntries || this.#queuedBytes + body.length > this.#limits.queueBytes) {
      this.dropped++;
      return;
    }
    this.#queue.push({ endpoint: call.endpoint, body });
    this.#queuedBytes += body.length;
    this.#immediate ??= setImmediate(this.#drain);
  };

  /** Checks up to `perTurn` waiting answers, then yields to the event loop while more wait. */
  readonly #drain = (): void => {
    this.#immediate = undefined;
    for (let n = 0; n < this.#limits.perTurn; n++) {
      const next = this.#queue.shift();
      if (next === undefined) break;
      this.#queuedBytes -= next.body.length;
      try {
        this.#check(next);
      } catch {
        // A check never fails anything else.
      }
    }
    if (this.#queue.length > 0) this.#immediate = setImmediate(this.#drain);
  };

  /** Checks every waiting answer now (tests; the app's close). */
  flush(): void {
    while (this.#queue.length > 0) {
      if (this.#immediate !== undefined) clearImmediate(this.#immediate);
      this.#drain();
    }
    if (this.#immediate !== undefined) clearImmediate(this.#immediate);
    this.#immediate = undefined;
  }

  /** Drops the waiting answers unchecked (the app's close). */
  close(): void {
    if (this.#immediate !== undefined) clearImmediate(this.#immediate);
    this.#immediate = undefined;
    this.#queue.length = 0;
    this.#queuedBytes = 0;
  }

  #check(answer: Waiting): void {
    const endpoint = answer.endpoint;
    if (endpoint === UNKNOWN_ENDPOINT_CODE) return;
    const expectation = UPSTREAM_ANSWER_EXPECTATIONS[endpoint] ?? {};
    // An empty answer is not a JSON answer: checked only where the proxy needs the body.
    if (expectation.needsBody !== true && isBlank(answer.body)) return;
    const { findings } = checkAnswerBody(expectation, answer.body);
    this.#report?.contractChecked(endpoint);
    const kinds = new Set<ContractFindingKind>();
    for (const finding of findings) {
      kinds.add(finding.kind);
      const key = `${endpoint} ${finding.kind} ${finding.path}`;
      if (!this.#mayLog(key)) continue;
      const fields = {
        event: 'upstream-contract',
        endpoint,
        path: finding.path,
        kind: finding.kind,
        expected: finding.expected,
        got: finding.got,
      };
      const message = `upstream contract: ${endpoint} ${contractFindingText(finding)}`;
      if (CONTRACT_FINDING_KINDS[finding.kind].level === 'note') this.#log.info(fields, message);
      else this.#log.warn(fields, message);
    }
    for (const kind of kinds) this.#report?.contractFinding(endpoint, kind);
  }

  /** Whether a line for `key` may be written now (none in the last interval); remembers it if so. */
  #mayLog(key: string): boolean {
    const now = this.#now();
    const last = this.#logged.get(key);
    if (last !== undefined && now - last < this.#limits.logIntervalMs) return false;
    if (last !== undefined) this.#logged.delete(key);
    else if (this.#logged.size >= this.#limits.logKeys) {
      // Forget the oldest key if its minute is over; with every key recent, leave the line out.
      const [oldest, at] = this.#logged.entries().next().value as [string, number];
      if (now - at < this.#limits.logIntervalMs) {
        this.unlogged++;
        return false;
      }
      this.#logged.delete(oldest);
    }
    this.#logged.set(key, now);
    return true;
  }
}

/** Whether a body holds nothing but white space (or a byte-order mark). */
function isBlank(body: Buffer): boolean {
  for (const byte of body) {
    if (byte !== 0x20 && byte !== 0x0a && byte !== 0x0d && byte !== 0x09 && byte !== 0xef && byte !== 0xbb && byte !== 0xbf) return false;
  }
  return true;
}

/** One upstream observer that tells each of `observers` (the metrics, the contract checks); `undefined` when none. */
export function joinObservers(...observers: (UpstreamObserver | undefined)[]): UpstreamObserver | undefined {
  const present = observers.filter((o): o is UpstreamObserver => o !== undefined);
  if (present.length <= 1) return present[0];
  return (call) => {
    for (const observer of present) {
      try {
        observer(call);
      } catch {
        // One observer's failure never keeps the others from the call.
      }
    }
  };
}
