/**
 * The error classifier of spec 7.2 and 7.3: from the status, body and URL of a failed call to
 * an endpoint code (EP), an error code (EM) and the reference `EPdddd-EMdddd` (spec 7.1).
 *
 * No regular expression runs on a reason: reasons are matched with `indexOf` / `startsWith`,
 * so classification is linear in the input, and only the first {@link MAX_REASON_LENGTH}
 * characters of a reason are scanned. URLs are matched segment by segment.
 *
 * Isomorphic: no Node built-ins, no imports outside `src/errors`.
 *
 * @module
 */

import { ENDPOINT_LIST, type EndpointCode, type EndpointRow, isEndpointCode } from './endpoint-codes.js';
import { ERROR_LIST, type ErrorCode, FALLBACK_ERROR_CODE } from './error-codes.js';
import { PROXY_ENDPOINT_CODES, UNKNOWN_ENDPOINT_CODE } from './proxy-endpoint-codes.js';
import { type ErrorRef, formatRef } from './ref.js';

// ---------------------------------------------------------------------------------------------
// EP matching (spec 7.2)
// ---------------------------------------------------------------------------------------------

/** A URL as the classifier accepts it: absolute on any host, or a relative path. */
export type UrlInput = string | URL | null | undefined;

const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//;

/**
 * The path segments of a URL as EP matching sees them (spec 7.2): query string and fragment
 * removed, scheme and host removed from an absolute (or protocol-relative) URL, empty and `.`
 * segments dropped (so a trailing or doubled slash is tolerated, and `auth/login` equals
 * `/auth/login`), then one leading version prefix `/api/v2/`, `/v1/` or `/v2/` removed.
 * Segments are compared as written (case-sensitive, not percent-decoded).
 */
function pathSegments(url: UrlInput): string[] {
  let s: string;
  if (typeof url === 'string') s = url.trim();
  else if (typeof URL !== 'undefined' && url instanceof URL) s = url.href;
  else return [];
  const q = s.indexOf('?');
  const h = s.indexOf('#');
  const cut = q === -1 ? h : h === -1 ? q : Math.min(q, h);
  if (cut !== -1) s = s.slice(0, cut);
  const scheme = SCHEME.exec(s);
  if (scheme !== null || s.startsWith('//')) {
    const rest = s.slice(scheme !== null ? scheme[0].length : 2);
    const slash = rest.indexOf('/');
    s = slash === -1 ? '' : rest.slice(slash);
  }
  let segments = s.split('/').filter((seg) => seg !== '' && seg !== '.');
  if (segments[0] === 'api' && segments[1] === 'v2') segments = segments.slice(2);
  else if (segments[0] === 'v1' || segments[0] === 'v2') segments = segments.slice(1);
  return segments;
}

/**
 * The path a URL is matched on (spec 7.2), for logs and tests: see the rules of
 * {@link endpointCodeFor}. Never throws.
 * @example normalizeEndpointPath('https://bff.example.com/api/v2/auth/login/?a=1') // '/auth/login'
 */
export function normalizeEndpointPath(url: UrlInput): string {
  return `/${pathSegments(url).join('/')}`;
}

interface CompiledEndpoint {
  readonly code: EndpointCode;
  readonly methods: EndpointRow['methods'];
  /** Literal segments, or `null` for a `{param}` segment (one non-empty segment). */
  readonly fixed: readonly (string | null)[];
  /** `null`: no more segments; otherwise the prefix of the next segment (`''` = zero or more segments). */
  readonly rest: { readonly prefix: string } | null;
}

function compilePattern(code: EndpointCode, row: Pick<EndpointRow, 'methods' | 'path'>): CompiledEndpoint | null {
  if (row.path === null) return null;
  const parts = row.path.split('/').filter((p) => p !== '');
  const last = parts[parts.length - 1];
  let rest: CompiledEndpoint['rest'] = null;
  if (last?.endsWith('*')) {
    parts.pop();
    rest = { prefix: last.slice(0, -1) };
  }
  const fixed = parts.map((p) => (p.startsWith('{') && p.endsWith('}') ? null : p));
  return { code, methods: row.methods, fixed, rest };
}

function compileRows(
  rows: readonly { readonly code: EndpointCode; readonly methods: EndpointRow['methods']; readonly path: string | null }[],
): CompiledEndpoint[] {
  return rows.map((e) => compilePattern(e.code, e)).filter((c): c is CompiledEndpoint => c !== null);
}

// Compiled on first use, not at import: a page that imports this module for the proxy's rows or
// the EM matching alone (the browser SDK) bundles no row of the whole EP registry.
let compiledRegistry: readonly CompiledEndpoint[] | undefined;
let compiledProxyRows: readonly CompiledEndpoint[] | undefined;

function firstMatch(compiled: readonly CompiledEndpoint[], method: string | null | undefined, url: UrlInput): EndpointCode {
  const segments = pathSegments(url);
  const m = typeof method === 'string' && method.trim() !== '' ? method.trim().toUpperCase() : null;
  for (const p of compiled) {
    if (pathMatches(segments, p) && methodMatches(m, p.methods)) return p.code;
  }
  return UNKNOWN_ENDPOINT_CODE;
}

function pathMatches(segments: readonly string[], p: CompiledEndpoint): boolean {
  const n = p.fixed.length;
  if (p.rest === null ? segments.length !== n : segments.length < n) return false;
  for (let i = 0; i < n; i++) {
    const want = p.fixed[i];
    if (want !== null && want !== segments[i]) return false;
  }
  if (p.rest === null || p.rest.prefix === '') return true;
  return segments[n]?.startsWith(p.rest.prefix) === true;
}

function methodMatches(method: string | null, allowed: EndpointRow['methods']): boolean {
  if (method === null || allowed === 'any') return true;
  const list: readonly string[] = allowed;
  return list.includes(method) || (method === 'HEAD' && list.includes('GET'));
}

/**
 * The EP code of a call (spec 7.2): the first row, in the registry's order, whose path
 * pattern matches the URL and, when a method is given, whose methods include it.
 *
 * - The URL may be absolute on any host (`https://bff.example.com/auth/login`), protocol
 *   relative, or a relative path (`/auth/login`, `auth/login`).
 * - Query string and fragment are ignored; a trailing or doubled slash is tolerated; one
 *   leading version prefix `/api/v2/`, `/v1/` or `/v2/` is stripped. Any other path prefix
 *   (for example a base path of the BFF) is not stripped.
 * - `{id}`, `{slug}`, `{type}`, `{page}`, `{provider}`, `{code}` match exactly one segment;
 *   `/bff/users/kyc*` covers `/bff/users/kyc` and every sub-route; `/api/wallet/*`,
 *   `/core-sportbook/*` and the like cover the path and every sub-path.
 * - The method is compared case-insensitively; `HEAD` counts as `GET`. Omit it (or pass
 *   `null`/`''`) to match on the path only. With a method, a path whose rows all name other
 *   methods is unregistered: `/api/*` routes fall to EP0799 and the rest to EP0000.
 *
 * @param method - the HTTP method of the call, or `null`/`undefined` for path-only matching
 * @param url - the URL that failed
 * @returns the EP code; EP0799 for an unmatched `/api/*` route; EP0000 for anything else
 *   (including a missing URL). Never throws.
 * @example endpointCodeFor('POST', 'https://bff.example.com/v1/auth/login?x=1') // 'EP0001'
 */
export function endpointCodeFor(method: string | null | undefined, url: UrlInput): EndpointCode {
  compiledRegistry ??= compileRows(ENDPOINT_LIST);
  return firstMatch(compiledRegistry, method, url);
}

/**
 * The EP code of a call to one of the proxy's own routes (spec 7.2 EP0700-EP0799), matched on
 * the internal rows alone (`PROXY_ENDPOINT_CODES`) with the rules of {@link endpointCodeFor}: on
 * an `/api/*` URL it gives what {@link endpointCodeFor} gives (no BFF row matches such a URL),
 * EP0799 for an `/api/*` route no other row names; EP0000 for a URL outside `/api/`. Never throws.
 * @example proxyEndpointCodeFor('GET', '/api/games/list') // 'EP0717'
 */
export function proxyEndpointCodeFor(method: string | null | undefined, url: UrlInput): EndpointCode {
  compiledProxyRows ??= compileRows(
    (Object.keys(PROXY_ENDPOINT_CODES) as (keyof typeof PROXY_ENDPOINT_CODES)[]).map((code) => ({ code, ...PROXY_ENDPOINT_CODES[code] })),
  );
  return firstMatch(compiledProxyRows, method, url);
}

// ---------------------------------------------------------------------------------------------
// Reason extraction (spec 7.3 and docs/behaviour.md "Clarifications of the specification")
// ---------------------------------------------------------------------------------------------

/**
 * The longest reason, in characters, that is returned and scanned; a longer reason (typically
 * a raw HTML or JSON body) is cut to this length before matching. 8 KiB.
 */
export const MAX_REASON_LENGTH = 8192;

const REASON_FIELDS = ['reason', 'code', 'error', 'message'] as const;

/** A string with something other than white space in it. */
function present(value: unknown): value is string {
  return typeof value === 'string' && value.trim() !== '';
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `detail` as a string, or the first present string field of a detail object (one level). */
function detailReason(detail: unknown): string | undefined {
  if (present(detail)) return detail;
  const d = Array.isArray(detail) ? detail[0] : detail;
  if (present(d)) return d;
  if (!isRecord(d)) return undefined;
  for (const key of REASON_FIELDS) {
    const v = d[key];
    if (present(v)) return v;
  }
  for (const key of Object.keys(d)) {
    const v = d[key];
    if (present(v)) return v;
  }
  return undefined;
}

function looksLikeJsonObject(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d || c === 0xfeff) continue;
    return c === 0x7b; // '{'
  }
  return false;
}

function cap(reason: string): string {
  const trimmed = reason.length > MAX_REASON_LENGTH ? reason.slice(0, MAX_REASON_LENGTH) : reason;
  return trimmed.trim();
}

/**
 * The reason string of a failed response (spec 7.3, docs/behaviour.md "Clarifications of the specification", "Reason priority"): the first
 * *present* (a string with non-white-space content; numbers, booleans, objects and empty
 * strings are absent) of
 * 1. `reason`, 2. `code`, 3. `error`, 4. `message` (top-level fields of the body);
 * 5. `detail.*`: `detail` when it is a string, otherwise the first present of
 *    `detail.reason`, `detail.code`, `detail.error`, `detail.message`, then of its other
 *    string fields in key order (for an array, its first element is read the same way);
 * 6. `status` when the body's `status` field is a string (e.g. `"token_expired"`);
 * 7. the raw body text.
 * It is the first field present, not the first that matches a pattern (hence spec 7.4.1).
 *
 * `data` is the parsed body (an object), or a string (then it is the raw body), or absent.
 * When `data` is not an object and the raw text is a JSON object, the text is parsed and read
 * by the same priority. The result is trimmed and cut to {@link MAX_REASON_LENGTH} characters.
 *
 * @param data - the parsed response body, a string, or `null`/`undefined`
 * @param rawBody - the response text, if the caller has it
 * @returns the reason, or `null` when there is none. Never throws.
 * @example extractReason({ error: 'x', reason: 'token_expired' }) // 'token_expired'
 */
export function extractReason(data: unknown, rawBody?: string | null): string | null {
  let raw = present(rawBody) ? rawBody : undefined;
  let body: unknown = data;
  if (typeof data === 'string') {
    raw ??= present(data) ? data : undefined;
    body = undefined;
  }
  if (!isRecord(body) && raw !== undefined && looksLikeJsonObject(raw)) {
    try {
      body = JSON.parse(raw) as unknown;
    } catch {
      body = undefined;
    }
  }
  if (isRecord(body)) {
    for (const key of REASON_FIELDS) {
      const v = body[key];
      if (present(v)) return cap(v);
    }
    const d = detailReason(body.detail);
    if (d !== undefined) return cap(d);
    if (present(body.status)) return cap(body.status);
  }
  return raw === undefined ? null : cap(raw);
}

// ---------------------------------------------------------------------------------------------
// EM matching (spec 7.3)
// ---------------------------------------------------------------------------------------------

interface Shadow {
  /** A longer listed word of another row (lower case). */
  readonly text: string;
  /** Where the shorter word sits inside it. */
  readonly offset: number;
}

interface CompiledWord {
  readonly word: string;
  readonly shadows: readonly Shadow[];
}

interface CompiledErrorRow {
  readonly code: ErrorCode;
  readonly statuses: readonly number[] | 'any';
  readonly words: readonly CompiledWord[];
  readonly prefixes: readonly string[];
}

function compileErrorRows(): { specific: CompiledErrorRow[]; generic: CompiledErrorRow[] } {
  const all = ERROR_LIST.map((e) => ({
    code: e.code,
    statuses: e.statuses,
    plainWords: (e.words ?? []).map((w) => w.toLowerCase()),
    prefixes: (e.prefixes ?? []).map((p) => p.toLowerCase()),
  }));
  const specific: CompiledErrorRow[] = [];
  const generic: CompiledErrorRow[] = [];
  for (const row of all) {
    const words = row.plainWords.map((word) => {
      const shadows: Shadow[] = [];
      for (const other of all) {
        if (other.code === row.code) continue;
        for (const longer of other.plainWords) {
          if (longer.length <= word.length) continue;
          for (let k = longer.indexOf(word); k !== -1; k = longer.indexOf(word, k + 1)) {
            shadows.push({ text: longer, offset: k });
          }
        }
      }
      return { word, shadows };
    });
    const compiled = { code: row.code, statuses: row.statuses, words, prefixes: row.prefixes };
    (words.length + row.prefixes.length > 0 ? specific : generic).push(compiled);
  }
  return { specific, generic };
}

const { specific: SPECIFIC_ROWS, generic: GENERIC_ROWS } = compileErrorRows();

function statusMatches(status: number, statuses: readonly number[] | 'any'): boolean {
  return statuses === 'any' || statuses.includes(status);
}

/** Whether `w` occurs in `lower` at least once outside a longer listed word of another row. */
function wordOccurs(lower: string, w: CompiledWord): boolean {
  for (let i = lower.indexOf(w.word); i !== -1; i = lower.indexOf(w.word, i + 1)) {
    let shadowed = false;
    for (const s of w.shadows) {
      const start = i - s.offset;
      if (start >= 0 && lower.startsWith(s.text, start)) {
        shadowed = true;
        break;
      }
    }
    if (!shadowed) return true;
  }
  return false;
}

function reasonMatches(lower: string, row: CompiledErrorRow): boolean {
  if (row.prefixes.length > 0) {
    const head = lower.trimStart();
    if (row.prefixes.some((p) => head.startsWith(p))) return true;
  }
  return row.words.some((w) => wordOccurs(lower, w));
}

/**
 * The EM code of a failure (spec 7.3), from its status and reason.
 *
 * Specific rows (status + reason pattern) are tried first, in table order, then generic rows
 * (status only), in table order; the first match wins. So a 401 is one of EM0001-EM0014 by
 * its reason, and EM0005 when the reason matches no 401 row or there is none; 403 is EM0011
 * whatever the body; 429 EM0021; 409 EM0022; 500 EM0031; 502/503/504 EM0032; 202 EM0041;
 * 0 (no response) EM0042; any other status, or a status that is not an integer, EM0099.
 *
 * @param status - the HTTP status, `0` for a network failure without a response
 * @param reason - the reason, as returned by {@link extractReason}
 * @returns the EM code. Never throws.
 * @example errorCodeForReason(401, 'Token expired') // 'EM0003'
 */
export function errorCodeForReason(status: number, reason: string | null | undefined): ErrorCode {
  const s = typeof status === 'number' && Number.isInteger(status) ? status : Number.NaN;
  if (typeof reason === 'string' && reason !== '') {
    const lower = cap(reason).toLowerCase();
    for (const row of SPECIFIC_ROWS) {
      if (statusMatches(s, row.statuses) && reasonMatches(lower, row)) return row.code;
    }
  }
  for (const row of GENERIC_ROWS) {
    if (statusMatches(s, row.statuses)) return row.code;
  }
  return FALLBACK_ERROR_CODE;
}

// ---------------------------------------------------------------------------------------------
// classifyError
// ---------------------------------------------------------------------------------------------

/**
 * The proxy's refusals that name the upstream endpoint they protect (docs/behaviour.md "Resilience"): their
 * envelope carries `endpoint: "EPdddd"`, and their reference names that endpoint rather than the
 * proxy route, so a reference read out by a user says which BFF endpoint is failing.
 */
export const UPSTREAM_REFUSALS: readonly string[] = ['upstream_busy', 'upstream_circuit_open'];

/**
 * The EP code an upstream refusal's envelope names (`{ error: "upstream_busy", endpoint: "EP0042" }`)
 * when `known` accepts it, else `undefined`.
 */
function refusingEndpointOf(data: unknown, known: (code: unknown) => code is EndpointCode): EndpointCode | undefined {
  if (!isRecord(data)) return undefined;
  const { error, endpoint } = data;
  if (typeof error !== 'string' || !UPSTREAM_REFUSALS.includes(error)) return undefined;
  return known(endpoint) ? endpoint : undefined;
}

/**
 * Whether `code` is written as an EP code (`EP` and four digits). The browser's check of a code
 * the proxy names: the proxy names codes of its own registry only, and the page does not bundle
 * the registry to look it up.
 */
function isWrittenAsEndpointCode(code: unknown): code is EndpointCode {
  return typeof code === 'string' && code.length === 6 && code.startsWith('EP') && [...code.slice(2)].every((c) => c >= '0' && c <= '9');
}

/** Input of {@link classifyError}. */
export interface ClassifyErrorInput {
  /** HTTP status of the response; `0` when there was no response (network failure). */
  readonly status: number;
  /** The parsed response body (an object), a string (read as the raw body), or absent. */
  readonly data?: unknown;
  /** The response text, when available. */
  readonly rawBody?: string | null;
  /** The URL that failed: absolute on any host, or a relative path. */
  readonly url?: UrlInput;
  /** The HTTP method, when known: makes EP matching method-aware (see {@link endpointCodeFor}). */
  readonly method?: string | null;
}

/** Result of {@link classifyError}. */
export interface ErrorClassification {
  /** EP code of the URL (spec 7.2). */
  readonly endpointCode: EndpointCode;
  /** EM code of the failure (spec 7.3). */
  readonly errorCode: ErrorCode;
  /** `EPdddd-EMdddd` (spec 7.1), without the `#` display prefix. */
  readonly ref: ErrorRef;
  /** The reason read from the body (see {@link extractReason}), or `null`; for the logout beacon (spec 6). */
  readonly reason: string | null;
}

/**
 * Classifies a failed call (spec 7.1-7.3): the endpoint code of the URL, the error code of
 * the status and reason, and the reference code that joins them.
 *
 * @param input - `{ status, data, rawBody, url, method? }`; see {@link ClassifyErrorInput}
 * @returns `{ endpointCode, errorCode, ref, reason }`. Never throws: an unknown URL is EP0000,
 *   an unrecognised failure EM0099 (EM0005 for a 401).
 * @example
 * classifyError({ status: 401, data: { reason: 'token_expired' }, url: '/api/v2/auth/user-profile' })
 * // { endpointCode: 'EP0003', errorCode: 'EM0003', ref: 'EP0003-EM0003', reason: 'token_expired' }
 */
export function classifyError(input: ClassifyErrorInput): ErrorClassification {
  const { data, url, method } = input ?? ({} as ClassifyErrorInput);
  return classifyWith(input, refusingEndpointOf(data, isEndpointCode) ?? endpointCodeFor(method, url));
}

/**
 * {@link classifyError} for a call to the proxy's own `/api/*` routes, as the browser SDK makes
 * them: the EP code from the internal rows alone ({@link proxyEndpointCodeFor}), so that a page
 * bundles no BFF row; the EP code an upstream refusal names is taken when it is written as one.
 * The same answer as {@link classifyError} for every `/api/*` call and every code of the registry.
 *
 * @param input - `{ status, data, rawBody, url, method? }`; see {@link ClassifyErrorInput}
 * @returns `{ endpointCode, errorCode, ref, reason }`. Never throws.
 * @example classifyProxyError({ status: 401, data: { reason: 'token_expired' }, url: '/api/wallet/refresh', method: 'POST' })
 * // { endpointCode: 'EP0710', errorCode: 'EM0003', ref: 'EP0710-EM0003', reason: 'token_expired' }
 */
export function classifyProxyError(input: ClassifyErrorInput): ErrorClassification {
  const { data, url, method } = input ?? ({} as ClassifyErrorInput);
  return classifyWith(input, refusingEndpointOf(data, isWrittenAsEndpointCode) ?? proxyEndpointCodeFor(method, url));
}

function classifyWith(input: ClassifyErrorInput, endpointCode: EndpointCode): ErrorClassification {
  const { status, data, rawBody } = input ?? ({} as ClassifyErrorInput);
  const reason = extractReason(data, typeof rawBody === 'string' ? rawBody : undefined);
  const errorCode = errorCodeForReason(status, reason);
  return { endpointCode, errorCode, ref: formatRef(endpointCode, errorCode), reason };
}
