/**
 * The doctor's run: probes a running BFF the way the proxy calls it (docs/behaviour.md "Upstream requests":
 * the paths of the route tables and the EP registry, `Accept: application/json`,
 * `Accept-Encoding: identity`, `Authorization: Bearer <jwt>` and the session cookie) and judges each
 * answer (`checks.ts`). One row per probe of {@link PROBES}, in the table's order.
 *
 * Read-only unless told otherwise: the catalogue and every read of the specification are probed, the
 * session ones with the doctor's own session (login, then profile and the reads, then refresh, then
 * logout); side-effect `GET`s, mutations and money moves only with `allowWrites` against a sandbox
 * ({@link isSandbox}). Bounded: each call has a time limit (`probeTimeoutMs`), the whole run another
 * (`totalTimeoutMs`: the probes not started by then are skipped), answers are read up to `maxBytes`.
 * Calls go one at a time, so a production BFF sees at most one request of the doctor at any moment.
 *
 * @example
 * const report = await runDoctor({ bffUrl: 'http://127.0.0.1:4000', login: 'demo@example.com', password: 'Demo#2026' });
 * report.exitCode; // 0 when every required endpoint conforms
 *
 * @module
 */
import { performance } from 'node:perf_hooks';
import { Agent, type Dispatcher, request } from 'undici';
import { buildPath, buildQuery } from '../upstream/paths.js';
import { dedupeFindings, type Finding, judgeAnswer, type RawAnswer, tokenFindings, type Verdict, verdictOf } from './checks.js';
import { checkIdempotency, type DepositAnswer, type IdempotencyCheck, transactionIdOf } from './idempotency.js';
import { type Discovered, PROBES, type Probe, UNPROBED } from './probes.js';
import { scrubText } from './scrub.js';

/** Options of {@link runDoctor}. */
export interface DoctorOptions {
  /** `{bff_base_url}`: origin plus optional path prefix (`BFF_BASE_URL`). */
  readonly bffUrl: string;
  /** A test account's login and password; without them the session rows are skipped. */
  readonly login?: string | undefined;
  readonly password?: string | undefined;
  /** Also probe side-effect `GET`s, mutations with a sample body and money moves; refused unless the BFF is a sandbox. */
  readonly allowWrites?: boolean | undefined;
  /** Name of the session cookie sent with the session (`SESSION_COOKIE_NAME`); default `access_token`. */
  readonly cookieName?: string | undefined;
  /** Time limit of one call, headers and body, in ms; default 10 000. */
  readonly probeTimeoutMs?: number | undefined;
  /** Time limit of the whole run, in ms; default 120 000. */
  readonly totalTimeoutMs?: number | undefined;
  /** Largest answer read, in bytes (`UPSTREAM_MAX_RESPONSE_BYTES`); default 4 MiB. */
  readonly maxBytes?: number | undefined;
  /** A `warn` row (a deviation the proxy absorbs, such as a coded answer) fails the run too. Default `false`. */
  readonly strict?: boolean | undefined;
  /**
   * Also send the deposit twice with one `Idempotency-Key` (`idempotency.ts`): real deposits on the
   * BFF probed (one or two of 1000 cents), so only with a staging account's `login` and `password`.
   * Default `false`.
   */
  readonly checkIdempotency?: boolean | undefined;
}

/** One row of the report: a probe and what came of it. */
export interface DoctorRow {
  readonly code: string;
  readonly method: string;
  /** The path called, with its query (no credential ever appears in it). */
  readonly path: string;
  readonly kind: Probe['kind'];
  readonly required: boolean;
  /** The answer's status; `null` when there was none (skipped, time limit, connection failure). */
  readonly status: number | null;
  /** From the request to the whole answer, in ms; `null` when not probed. */
  readonly latencyMs: number | null;
  readonly verdict: Verdict;
  readonly findings: readonly Finding[];
  /** Error reference of an error answer (spec 7.1). */
  readonly ref?: string;
}

/** The outcome of a run. */
export interface DoctorReport {
  /** The BFF URL probed, without any user or password it held. */
  readonly bffUrl: string;
  /** Whether the BFF was recognised as a sandbox ({@link isSandbox}). */
  readonly sandbox: boolean;
  readonly startedAt: string;
  /** Duration of the run, in ms. */
  readonly durationMs: number;
  readonly rows: readonly DoctorRow[];
  /** The EP codes with no probe, and why. */
  readonly unprobed: Readonly<Record<string, string>>;
  /**
   * Rows by verdict; `skip` counts only reads and session rows that were not probed, `notCalled` the
   * side-effect, mutation and money rows that a run without `allowWrites` never calls.
   */
  readonly summary: Readonly<Record<Verdict | 'notCalled', number>>;
  /** With `checkIdempotency`: whether the BFF honours `Idempotency-Key` itself; absent when not asked, or when the login gave no session. */
  readonly idempotency?: IdempotencyCheck;
  /**
   * 0: every required row probed conforms (`pass`, or `warn` unless `strict`); 1: a required row fails
   * (or, with `strict`, the idempotency check is not `honoured`); 3: some required reads were not
   * probed (no login, time limit).
   */
  readonly exitCode: 0 | 1 | 3;
}

/** Thrown by {@link runDoctor} for options it refuses (a write run against a BFF that is not a sandbox). */
export class DoctorUsageError extends Error {}

/**
 * Thrown by {@link runDoctor} when the BFF cannot be reached at all: its first call failed to connect
 * (refused, no such host, no route, connect time limit) before any answer. The message is one line
 * naming the origin and the cause; nothing else was probed.
 */
export class DoctorUnreachableError extends Error {}

/** Connection failures that mean nothing listens at the BFF URL (undici's and the system's codes). */
const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
  'UND_ERR_CONNECT_TIMEOUT',
]);

const DEFAULTS = { probeTimeoutMs: 10_000, totalTimeoutMs: 120_000, maxBytes: 4 * 1024 * 1024, cookieName: 'access_token' };

const LOOPBACK = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/i;

/**
 * Whether a BFF URL is a sandbox: its host is a loopback address AND `GET /__sandbox/health` on its
 * origin answers `{ ok: true, server: "bff" }` (the embedded sandbox's admin API, `src/sandbox/README.md`).
 * Both, so that neither a tunnel to a real BFF on localhost nor a public host that mimics the marker
 * passes. Never throws: any failure is `false`.
 * @param timeoutMs - limit of the marker call, in ms
 */
export async function isSandbox(bffUrl: string, dispatcher: Agent, timeoutMs: number): Promise<boolean> {
  try {
    const url = new URL(bffUrl);
    if (!LOOPBACK.test(url.hostname)) return false;
    const res = await request(new URL('/__sandbox/health', url.origin), { dispatcher, signal: AbortSignal.timeout(timeoutMs) });
    const body = (await res.body.json()) as { ok?: unknown; server?: unknown };
    return res.statusCode === 200 && body.ok === true && body.server === 'bff';
  } catch {
    return false;
  }
}

/** What earlier answers told: sample values of later probes, and the session. */
interface Discoveries {
  slug?: string;
  gameId?: string;
  userId?: string;
}

function resolve(value: string | Discovered, found: Discoveries): string {
  return typeof value === 'string' ? value : (found[value.from] ?? value.fallback);
}

function resolveAll(values: Readonly<Record<string, string | Discovered>> | undefined, found: Discoveries): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(values ?? {})) out[k] = resolve(v, found);
  return out;
}

/** The first value of `key` in a JSON answer (depth first), as a string: a game's `slug` or `id`. */
function firstValue(json: unknown, key: string, depth = 0): string | undefined {
  if (depth > 6 || json === null || typeof json !== 'object') return undefined;
  if (Array.isArray(json)) {
    for (const item of json) {
      const v = firstValue(item, key, depth + 1);
      if (v !== undefined) return v;
    }
    return undefined;
  }
  const own = (json as Record<string, unknown>)[key];
  if ((typeof own === 'string' && own !== '') || typeof own === 'number') return String(own);
  for (const v of Object.values(json)) {
    const found = firstValue(v, key, depth + 1);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** The path and query of a probe, filled (the path segments checked and percent-encoded by `buildPath`). */
function target(probe: Probe, found: Discoveries): { path: string; query: string } {
  const path = buildPath(probe.path, resolveAll(probe.params, found));
  return { path, query: buildQuery(resolveAll(probe.query, found)) };
}

function bodyOf(probe: Probe, found: Discoveries): string | undefined {
  if (probe.method === 'GET' || probe.method === 'DELETE') return undefined;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(probe.body ?? {})) {
    if (v !== null && typeof v === 'object' && 'from' in v && 'fallback' in v) {
      const text = resolve(v as Discovered, found);
      out[k] = /^\d+$/.test(text) ? Number(text) : text;
    } else {
      out[k] = v;
    }
  }
  return JSON.stringify(out);
}

/** The body of an answer, read up to `maxBytes` (bytes; declared or sent beyond it: `overLimit`, the rest not read). */
async function readBody(res: Dispatcher.ResponseData, maxBytes: number): Promise<{ body: Buffer; overLimit: boolean }> {
  const declared = Number(res.headers['content-length']);
  const chunks: Buffer[] = [];
  let size = 0;
  let overLimit = Number.isFinite(declared) && declared > maxBytes;
  if (overLimit) res.body.destroy();
  else {
    for await (const chunk of res.body as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > maxBytes) {
        overLimit = true;
        res.body.destroy();
        break;
      }
      chunks.push(chunk);
    }
  }
  return { body: Buffer.concat(chunks), overLimit };
}

/**
 * Probes the BFF and judges every answer (see the module comment).
 * @throws {@link DoctorUsageError} when `allowWrites` is set and the BFF is not a sandbox, or
 *   `checkIdempotency` without `login` and `password`.
 * @throws {@link DoctorUnreachableError} when the first call cannot connect (nothing listens at the URL).
 */
export async function runDoctor(options: DoctorOptions): Promise<DoctorReport> {
  const probeTimeoutMs = options.probeTimeoutMs ?? DEFAULTS.probeTimeoutMs;
  const totalTimeoutMs = options.totalTimeoutMs ?? DEFAULTS.totalTimeoutMs;
  const maxBytes = options.maxBytes ?? DEFAULTS.maxBytes;
  const cookieName = options.cookieName ?? DEFAULTS.cookieName;
  const base = new URL(options.bffUrl);
  const prefix = base.pathname.replace(/\/+$/, '');
  const started = performance.now();
  const startedAt = new Date().toISOString();
  const deadline = started + totalTimeoutMs;
  // Redirects are never followed (undici's default); one connection: one call at a time.
  const dispatcher = new Agent({
    connections: 1,
    connect: { timeout: probeTimeoutMs },
    headersTimeout: probeTimeoutMs,
    bodyTimeout: probeTimeoutMs,
  });
  const results = new Map<Probe, DoctorRow>();
  const found: Discoveries = {};
  let token: string | undefined;
  let idempotency: IdempotencyCheck | undefined;
  if (options.checkIdempotency && (options.login === undefined || options.password === undefined)) {
    throw new DoctorUsageError(
      '--check-idempotency needs --login and its password: a staging account on which it makes real deposits (one or two of 1000 cents)',
    );
  }

  try {
    const sandbox = await isSandbox(options.bffUrl, dispatcher, probeTimeoutMs);
    if (options.allowWrites && !sandbox) {
      throw new DoctorUsageError(
        `--allow-writes is refused: ${base.origin} is not a sandbox (a loopback address whose GET /__sandbox/health answers { ok: true, server: "bff" })`,
      );
    }

    /**
     * Records the row of `probe`: its identity and target, and what came of it; its findings one per
     * field ({@link dedupeFindings}) and without the password or any JWT-like value ({@link scrubText}).
     */
    const record = (
      probe: Probe,
      path: string,
      outcome: Pick<DoctorRow, 'status' | 'latencyMs' | 'verdict' | 'findings'> & { ref?: string },
    ): void => {
      const findings = dedupeFindings(outcome.findings).map((f) => ({ level: f.level, text: scrubText(f.text, [options.password]) }));
      results.set(probe, {
        code: probe.code,
        method: probe.method,
        path,
        kind: probe.kind,
        required: probe.required,
        ...outcome,
        findings,
      });
    };
    /** Whether any call got an answer yet (a connection failure before that is an unreachable BFF). */
    let answered = false;

    const skip = (probe: Probe, why: string, level: 'skip' | 'fail' = 'skip'): void => {
      const { path, query } = target(probe, found);
      record(probe, path + query, {
        status: null,
        latencyMs: null,
        verdict: level,
        findings: [{ level: level === 'fail' ? 'fail' : 'note', text: why }],
      });
    };

    const probeOne = async (probe: Probe, extra?: (json: unknown) => Finding[]): Promise<unknown> => {
      if (performance.now() > deadline) {
        skip(probe, `not probed: the run's time limit (${totalTimeoutMs} ms) was reached`);
        return undefined;
      }
      const { path, query } = target(probe, found);
      const url = `${base.origin}${prefix}${path}${query}`;
      const headers: Record<string, string> = {
        accept: 'application/json',
        'accept-encoding': 'identity',
        'user-agent': 'front-proxy-doctor',
        'x-request-id': `doctor-${probe.code}`,
      };
      if (probe.session && token !== undefined) {
        headers.authorization = `Bearer ${token}`;
        headers.cookie = `${cookieName}=${token}`;
      }
      const body = probe.code === 'EP0001' ? JSON.stringify({ login: options.login, password: options.password }) : bodyOf(probe, found);
      if (body !== undefined) headers['content-type'] = 'application/json';
      const t0 = performance.now();
      let answer: RawAnswer;
      try {
        const res = await request(url, { method: probe.method, headers, body, dispatcher, signal: AbortSignal.timeout(probeTimeoutMs) });
        answer = { status: res.statusCode, headers: res.headers, ...(await readBody(res, maxBytes)) };
      } catch (error) {
        const e = error as { name?: string; code?: string; message?: string };
        if (!answered && UNREACHABLE_CODES.has(e.code ?? '')) {
          throw new DoctorUnreachableError(
            `the BFF at ${base.origin} cannot be reached (${e.code}): nothing was probed; check --bff and that the BFF is running`,
          );
        }
        const timedOut = e.name === 'TimeoutError' || e.name === 'AbortError' || (e.code ?? '').includes('TIMEOUT');
        const text = timedOut
          ? `no answer within ${probeTimeoutMs} ms (the proxy answers 504 upstream_timeout)`
          : `no answer: ${e.code ?? e.message ?? 'connection failed'} (the proxy answers 502 upstream_unavailable)`;
        record(probe, path + query, {
          status: null,
          latencyMs: Math.round(performance.now() - t0),
          verdict: 'fail',
          findings: [{ level: 'fail', text }],
        });
        return undefined;
      }
      answered = true;
      const latencyMs = Math.round(performance.now() - t0);
      const judged = judgeAnswer(probe, answer, maxBytes, url, [options.password]);
      const findings = [...judged.findings];
      if (judged.json !== undefined && answer.status >= 200 && answer.status < 300 && extra) findings.push(...extra(judged.json));
      record(probe, path + query, {
        status: answer.status,
        latencyMs,
        verdict: verdictOf(findings),
        findings,
        ...(judged.ref ? { ref: judged.ref } : {}),
      });
      return answer.status >= 200 && answer.status < 300 ? judged.json : undefined;
    };

    const byCode = (code: string): Probe => PROBES.find((p) => p.code === code) as Probe;
    const writeAllowed = (p: Probe): boolean =>
      options.allowWrites === true && (p.kind === 'side-effect' || ((p.kind === 'write' || p.kind === 'money') && p.body !== undefined));

    // 1. The catalogue, without a session; the list first: its first game names the samples of later probes.
    const list = await probeOne(byCode('EP0143'));
    found.slug = firstValue(list, 'slug');
    found.gameId = firstValue(list, 'id');
    for (const p of PROBES) if (p.kind === 'read' && !p.session && !results.has(p)) await probeOne(p);

    // 2. The doctor's own session: login, profile, the reads, [the writes], refresh, logout.
    const sessionRows = PROBES.filter((p) => p.session || p.kind === 'session');
    if (options.login === undefined || options.password === undefined) {
      for (const p of sessionRows) if (p.kind === 'read' || p.kind === 'session') skip(p, 'not probed: no --login (with its password)');
    } else {
      await probeOne(byCode('EP0001'), (json) => {
        const answer = json as { access_token?: unknown; expires_in?: unknown; type?: unknown };
        if (typeof answer.type === 'string') {
          return [
            { level: 'fail', text: `login answered type "${answer.type}": no session; probe with an account without a second factor` },
          ];
        }
        const out = tokenFindings(answer.access_token);
        if (out.length === 0) token = answer.access_token as string;
        if (typeof answer.expires_in !== 'number' || !(answer.expires_in > 0)) {
          out.push({ level: 'fail', text: 'expires_in: not a positive number of seconds (the cookie lifetime, Max-Age)' });
        }
        return out;
      });
      if (token === undefined) {
        for (const p of sessionRows)
          if (!results.has(p) && (p.kind === 'read' || p.kind === 'session')) skip(p, 'not probed: the login gave no session');
      } else {
        const profile = await probeOne(byCode('EP0003'), (json) => {
          const id = (json as { user?: { id?: unknown } }).user?.id;
          return id === undefined || id === null
            ? [{ level: 'fail', text: "user.id: missing; the proxy needs it for the user's own upstream paths (/users/update/{id})" }]
            : [];
        });
        const id = (profile as { user?: { id?: unknown } } | undefined)?.user?.id;
        if (typeof id === 'number' || typeof id === 'string') found.userId = String(id);
        for (const p of PROBES) if (p.kind === 'read' && p.session && !results.has(p)) await probeOne(p);
        for (const p of PROBES) if (p.kind !== 'read' && p.kind !== 'session' && writeAllowed(p)) await probeOne(p);
        if (options.checkIdempotency) {
          const deposit = byCode('EP0091');
          const url = `${base.origin}${prefix}${target(deposit, found).path}`;
          const body = bodyOf(deposit, found);
          idempotency = await checkIdempotency(async (extra): Promise<DepositAnswer> => {
            const session = token as string;
            const headers = {
              accept: 'application/json',
              'accept-encoding': 'identity',
              'content-type': 'application/json',
              'user-agent': 'front-proxy-doctor',
              'x-request-id': 'doctor-idempotency',
              authorization: `Bearer ${session}`,
              cookie: `${cookieName}=${session}`,
              ...extra,
            };
            try {
              const res = await request(url, { method: 'POST', headers, body, dispatcher, signal: AbortSignal.timeout(probeTimeoutMs) });
              const text = scrubText((await readBody(res, maxBytes)).body.toString('utf8'), [options.password]);
              const id = transactionIdOf(text);
              return { status: res.statusCode, body: text, ...(id === undefined ? {} : { transactionId: id }) };
            } catch (error) {
              return {
                status: null,
                body: '',
                error: (error as { code?: string; name?: string }).code ?? (error as Error).name ?? 'connection failed',
              };
            }
          });
        }
        await probeOne(byCode('EP0004'), (json) => {
          const out = tokenFindings((json as { access_token?: unknown }).access_token);
          if (out.length === 0) token = (json as { access_token: string }).access_token;
          return out;
        });
        await probeOne(byCode('EP0002'));
      }
    }
    for (const p of PROBES) {
      if (results.has(p)) continue;
      if (p.kind === 'read' || p.kind === 'session') skip(p, 'not probed');
      else if (!options.allowWrites)
        skip(
          p,
          `not called: ${p.kind === 'side-effect' ? 'it creates or hands out something' : p.kind === 'money' ? 'a money move' : 'a mutation'} (--allow-writes, sandbox only)`,
        );
      else skip(p, 'not called: no sample body for this mutation');
    }

    const rows = PROBES.map((p) => results.get(p) as DoctorRow);
    const summary: Record<Verdict | 'notCalled', number> = { pass: 0, warn: 0, fail: 0, skip: 0, notCalled: 0 };
    for (const r of rows) summary[r.verdict === 'skip' && r.kind !== 'read' && r.kind !== 'session' ? 'notCalled' : r.verdict] += 1;
    const failed =
      rows.some((r) => r.required && (r.verdict === 'fail' || (options.strict === true && r.verdict === 'warn'))) ||
      (options.strict === true && idempotency !== undefined && idempotency.verdict !== 'honoured');
    const incomplete = rows.some((r) => r.required && r.verdict === 'skip' && (r.kind === 'read' || r.kind === 'session'));
    const shown = new URL(options.bffUrl);
    shown.username = '';
    shown.password = '';
    return {
      bffUrl: shown.href.replace(/\/$/, ''),
      sandbox,
      startedAt,
      durationMs: Math.round(performance.now() - started),
      rows,
      unprobed: { ...UNPROBED } as Record<string, string>,
      summary,
      ...(idempotency === undefined ? {} : { idempotency }),
      exitCode: failed ? 1 : incomplete ? 3 : 0,
    };
  } finally {
    await dispatcher.close().catch(() => undefined);
  }
}
