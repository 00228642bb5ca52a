/**
 * The error envelope of proxy routes (spec 7.4, docs/behaviour.md "Error envelope") in one place:
 * upstream 401/403 bodies pass through byte for byte; every other failure answers
 * `{ ok: false, error, detail }` with the upstream status, or 500 when the status is unknown;
 * pre-authentication routes answer form-level errors instead (spec 7.4.4).
 *
 * @module
 */
import { isAscii } from 'node:buffer';
import { PROXY_ERRORS, type ProxyErrorName } from './proxy-errors.js';
import type { UpstreamResponse } from './upstream/client.js';
import { isJsonBytes } from './upstream/json-check.js';

/** The body of every proxy-made error: `error` is a stable snake_case name, `detail` a human message. */
export interface Envelope {
  ok: false;
  error: string;
  detail: string;
  [extra: string]: unknown;
}

/** A finished answer: status, body bytes or object, and the content type to send. */
export interface ProxyAnswer {
  status: number;
  body: Buffer | string | object | null;
  contentType?: string;
  /**
   * Upstream headers the browser gets with this answer (lower-case names): `Retry-After` of an upstream
   * 429 or 503, `WWW-Authenticate` of a 401 passed through (docs/behaviour.md "Upstream answers", "Headers").
   * A header the proxy set itself wins.
   */
  headers?: Readonly<Record<string, string>>;
}

/**
 * Builds an envelope of one of the proxy's own errors (spec 7.4.1): `error` is a name of the registry
 * (`proxy-errors.ts`), `detail` defaults to the registry's.
 */
export function envelope(error: ProxyErrorName, detail: string = PROXY_ERRORS[error].detail, extra?: Record<string, unknown>): Envelope {
  return { ok: false, error, detail, ...extra };
}

/** The envelope of an upstream failure whose `error` comes from the upstream: its reason, or a name for its status. */
function upstreamEnvelope(error: string, detail: string): Envelope {
  return { ok: false, error, detail };
}

/** The `Content-Type` of every JSON answer the proxy makes. */
export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/** Most envelope texts {@link envelopeText} remembers; past it, they are forgotten all at once. */
const ENVELOPE_TEXTS_MAX = 512;
const envelopeTexts = new Map<string, string>();

/**
 * The JSON text of an envelope (spec 7.4.1), serialised once per distinct envelope: a refusal (a 503
 * of an endpoint's guard, a 401) is sent thousands of times a second under overload, and its text
 * never changes. `extra` holds string values only (e.g. `{ endpoint: 'EP0032' }`). Send it with
 * {@link JSON_CONTENT_TYPE}.
 *
 * @example envelopeText('upstream_busy', 'The service is busy; try again shortly', { endpoint: 'EP0032' })
 * // '{"ok":false,"error":"upstream_busy","detail":"The service is busy; try again shortly","endpoint":"EP0032"}'
 */
export function envelopeText(error: ProxyErrorName, detail: string, extra?: Readonly<Record<string, string>>): string {
  let key = `${error}\n${detail}`;
  if (extra !== undefined) for (const name in extra) key += `\n${name}=${extra[name]}`;
  let text = envelopeTexts.get(key);
  if (text === undefined) {
    text = JSON.stringify(envelope(error, detail, extra));
    if (envelopeTexts.size >= ENVELOPE_TEXTS_MAX) envelopeTexts.clear();
    envelopeTexts.set(key, text);
  }
  return text;
}

/** Envelope names for upstream statuses that carry no usable reason (spec 7.4.1 `<short_failure_name>`). */
export const UPSTREAM_STATUS_NAMES: Readonly<Record<number, string>> = {
  400: 'bad_request',
  401: 'unauthorized',
  402: 'payment_required',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  408: 'request_timeout',
  409: 'conflict',
  410: 'gone',
  412: 'precondition_failed',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  422: 'unprocessable_entity',
  423: 'locked',
  429: 'too_many_requests',
  500: 'upstream_error',
  501: 'not_implemented',
  502: 'bad_gateway',
  503: 'service_unavailable',
  504: 'gateway_timeout',
};

/** Form-level error codes of pre-authentication routes (spec 7.4.4), by upstream status. */
export const FORM_STATUS_NAMES: Readonly<Record<number, string>> = {
  400: 'invalid_data',
  401: 'invalid_credentials',
  403: 'access_denied',
  404: 'not_found',
  409: 'conflict',
  422: 'invalid_data',
  423: 'account_locked',
  429: 'too_many_attempts',
};

const SNAKE = /^[a-z][a-z0-9_]{1,63}$/;
const URL_LIKE = /\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>]*/gi;
const JWT_LIKE = /\beyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}(?:\.[A-Za-z0-9_-]*)?/g;
const ADDRESS_LIKE = /\b\d{1,3}(?:\.\d{1,3}){3}(?::\d{1,5})?\b/g;
/** A stack frame written on one line: `at fn (/srv/app.js:12:7)`, `at /srv/app.js:12:7`. */
const FRAME_LIKE = /\bat\s+(?:[^\s()]+\s+)?\(?[^\s()]+:\d+(?::\d+)?\)?/g;
/**
 * A source path with a line number: `/srv/bff/app.js:12`, `C:\\app\\x.ts:3:1`, `node:internal/x:4`.
 * Linear in the text: a match starts only where a run of path characters starts (the lookbehind), and
 * every segment after the first begins with a separator, which no segment contains, so a run can be
 * split into segments one way only (a pattern that let `[\w.]+` runs split freely took minutes on a
 * 20-letter word).
 */
const SOURCE_LIKE = /(?<![\w.@:\\/-])(?:[A-Za-z]:|node:)?[\w.@-]*(?:[\\/][\w.@-]+)+:\d+(?::\d+)?/g;
const MAX_DETAIL = 300;

/**
 * Makes an upstream message safe to show: no URL, IP address, JWT-like string, stack lines or stack
 * frames written on one line, no source path; single line, at most 300 characters.
 */
export function safeDetail(text: string): string {
  let first = text.length > 4096 ? text.slice(0, 4096) : text;
  first = first.split(/\r?\n\s*at\s/)[0] ?? '';
  const cleaned = first
    .replace(URL_LIKE, '[address]')
    .replace(JWT_LIKE, '[token]')
    .replace(ADDRESS_LIKE, '[address]')
    .replace(FRAME_LIKE, '[stack]')
    .replace(SOURCE_LIKE, '[path]')
    .replace(/\s+/g, ' ')
    .trim();
  return cleaned.length > MAX_DETAIL ? `${cleaned.slice(0, MAX_DETAIL - 1)}…` : cleaned;
}

/** The UTF-8 byte-order mark, which a JSON recipient ignores (RFC 8259 §8.1). */
const BOM = '\uFEFF';

/** The length of the UTF-8 byte-order mark's bytes (EF BB BF). */
const UTF8_BOM_BYTES = 3;

/** Whether `body` starts with the UTF-8 byte-order mark: what `jsonText` drops from its text. */
function startsWithBom(body: Buffer): boolean {
  return body.length >= UTF8_BOM_BYTES && body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf;
}

/** `body` as text, without a leading UTF-8 byte-order mark (RFC 8259 §8.1). */
function jsonText(body: Buffer | string): string {
  const text = typeof body === 'string' ? body : body.toString('utf8');
  return text.startsWith(BOM) ? text.slice(1) : text;
}

/**
 * Parses a JSON body, or returns `undefined` when it is not JSON (empty, malformed, or nested too
 * deep for the runtime). A leading UTF-8 byte-order mark is ignored (RFC 8259 §8.1).
 */
export function parseJson(body: Buffer | string): unknown {
  const text = jsonText(body);
  if (text.length === 0) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function firstString(data: Record<string, unknown>, keys: readonly string[]): string | undefined {
  for (const key of keys) {
    const value = data[key];
    if (typeof value === 'string' && value.length > 0) return value;
  }
  return undefined;
}

/** The upstream's reason and message, read in the priority of spec 7.3 (`reason`, `code`, `error`, `message`, `detail`). */
export function upstreamReason(data: unknown): { reason?: string; message?: string } {
  if (typeof data === 'string') return { message: data };
  if (data === null || typeof data !== 'object' || Array.isArray(data)) return {};
  const record = data as Record<string, unknown>;
  const reason = firstString(record, ['reason', 'code', 'error']);
  let message = firstString(record, ['message', 'detail', 'error_description', 'msg']);
  const detail = record.detail;
  if (!message && detail && typeof detail === 'object' && !Array.isArray(detail)) {
    message = firstString(detail as Record<string, unknown>, ['message', 'reason', 'code']);
  }
  return { reason: reason ?? message, message: message ?? reason };
}

function statusName(status: number, table: Readonly<Record<number, string>>): string {
  return table[status] ?? (status >= 500 ? 'upstream_error' : 'request_failed');
}

/**
 * The media type of a `Content-Type` value (RFC 9110 §8.3.1): `type/subtype` in lower case, without
 * parameters; `undefined` when absent or not of that form.
 *
 * @example mediaTypeOf('Text/HTML; x=json') // 'text/html'
 */
export function mediaTypeOf(contentType: string | string[] | undefined): string | undefined {
  if (typeof contentType !== 'string') return undefined;
  const semicolon = contentType.indexOf(';');
  const type = (semicolon === -1 ? contentType : contentType.slice(0, semicolon)).trim().toLowerCase();
  return /^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+$/.test(type) ? type : undefined;
}

/** Whether a media type is JSON: `application/json` or any `+json` type (RFC 6839 §3.1). */
export function isJsonMediaType(type: string | undefined): boolean {
  return type === 'application/json' || (type !== undefined && type.endsWith('+json'));
}

/**
 * The answer for an upstream response with a status outside 2xx.
 *
 * - 401 and 403 (not pre-authentication): the upstream body byte for byte (spec 7.4.1); with `jsonOnly`
 *   (the raw passthrough), only when its media type is JSON ({@link isJsonMediaType}), else the envelope.
 * - 3xx: 502 `upstream_redirect` (redirects are never followed).
 * - a status outside 100-599: 500 envelope (spec 7.4.1 "500 when the status is unknown").
 * - other statuses: `{ ok: false, error, detail }` with the upstream status; `error` is the upstream's
 *   snake_case reason when it has one, else a name for the status.
 * - pre-authentication routes (spec 7.4.4): the same envelope shape with a form-level error code,
 *   401 included, never the passthrough body.
 */
export function upstreamFailureAnswer(res: UpstreamResponse, options: { preAuth?: boolean; jsonOnly?: boolean } = {}): ProxyAnswer {
  const { status } = res;
  if (!Number.isInteger(status) || status < 100 || status > 599) {
    return { status: 500, body: envelope('upstream_bad_status', 'The service answered with an unknown status') };
  }
  if (status >= 300 && status < 400) {
    return { status: 502, body: envelope('upstream_redirect', 'The service answered with a redirect') };
  }
  const headers = keptHeaders(res);
  const json = !options.jsonOnly || isJsonMediaType(mediaTypeOf(res.headers['content-type']));
  if ((status === 401 || status === 403) && !options.preAuth && json) {
    const type = String(res.headers['content-type'] ?? '');
    return {
      status,
      body: res.body,
      contentType: type.includes('json') ? type : 'application/json; charset=utf-8',
      ...(headers && { headers }),
    };
  }
  const { reason, message } = json ? upstreamReason(parseJson(res.body)) : {};
  const table = options.preAuth ? FORM_STATUS_NAMES : UPSTREAM_STATUS_NAMES;
  const error = reason && SNAKE.test(reason) ? reason : statusName(status, table);
  const detail = message ? safeDetail(message) : `The service answered ${status}`;
  return { status, body: upstreamEnvelope(error, detail || `The service answered ${status}`), ...(headers && { headers }) };
}

/** A `Retry-After` value (RFC 9110 §10.2.3): delay seconds, or an HTTP date. */
const RETRY_AFTER = /^(?:\d{1,10}|[A-Za-z]{3}, \d{2} [A-Za-z]{3} \d{4} \d{2}:\d{2}:\d{2} GMT)$/;
/** Longest `WWW-Authenticate` passed on (its challenges name schemes and realms, never much more). */
const MAX_CHALLENGE = 1_024;

/** The one value of an upstream header, `undefined` when absent or repeated. */
function single(value: string | string[] | undefined): string | undefined {
  return typeof value === 'string' ? value.trim() : undefined;
}

/**
 * The upstream headers an error answer keeps (docs/behaviour.md "Upstream answers", "Headers"): the
 * `Retry-After` of a 429 or 503, when it is one; the `WWW-Authenticate` of a 401, within
 * {@link MAX_CHALLENGE} characters and free of JWT-like text. Every other upstream header is dropped.
 */
function keptHeaders(res: UpstreamResponse): Record<string, string> | undefined {
  let kept: Record<string, string> | undefined;
  if (res.status === 429 || res.status === 503) {
    const retryAfter = single(res.headers['retry-after']);
    if (retryAfter !== undefined && RETRY_AFTER.test(retryAfter)) kept = { 'retry-after': retryAfter };
  } else if (res.status === 401) {
    const challenge = single(res.headers['www-authenticate']);
    if (challenge !== undefined && challenge.length > 0 && challenge.length <= MAX_CHALLENGE) {
      kept = { 'www-authenticate': challenge.replace(JWT_LIKE, '[token]') };
    }
  }
  return kept;
}

/** The answer for a 2xx whose body is not the JSON it must be (docs/behaviour.md "Upstream answers", "JSON"). */
export function badResponse(detail = 'The service sent an invalid answer'): ProxyAnswer {
  return { status: 502, body: envelope('upstream_bad_response', detail) };
}

/**
 * The answer for an upstream 2xx on a JSON route (docs/behaviour.md "Upstream answers", "JSON" and "Empty
 * answers"): a 204 stays a bodiless 204; an empty body is `{ "ok": true }` with the upstream status,
 * or 502 `upstream_bad_response` when the route needs the body (`bodyRequired`: login, registration,
 * refresh, profile); any other body is checked to be JSON ({@link isJsonBytes}: `JSON.parse`'s verdict,
 * without building the value; a UTF-8 byte-order mark ignored) and sent as the bytes that passed, or
 * as their decoded text when the mark or a character beyond ASCII makes it shorter; a body that is not
 * JSON is 502 `upstream_bad_response` (and so never cached).
 */
export function upstreamSuccessAnswer(res: UpstreamResponse, options: { bodyRequired?: boolean; unchecked?: boolean } = {}): ProxyAnswer {
  const { body, status } = res;
  if (status === 204) return options.bodyRequired ? badResponse('The service sent an empty answer') : { status, body: null };
  if (body.length === 0) return options.bodyRequired ? badResponse('The service sent an empty answer') : { status, body: { ok: true } };
  const from = startsWithBom(body) ? UTF8_BOM_BYTES : 0;
  if (options.unchecked !== true && !isJsonBytes(body, from)) return badResponse();
  // ASCII without a byte-order mark reads as it is: the bytes are sent without being decoded.
  if (from === 0 && isAscii(body)) return { status, body, contentType: JSON_CONTENT_TYPE };
  const text = jsonText(body);
  return { status, body: text.length === body.length ? body : text, contentType: JSON_CONTENT_TYPE };
}

/**
 * The answer for any upstream response on a JSON route (success or failure). `bodyRequired`: see
 * {@link upstreamSuccessAnswer}; `preAuth`: see {@link upstreamFailureAnswer}; `unchecked`: a 2xx
 * body is passed on without its JSON check, **for measurement only** (the instruction bench's ledger,
 * bench/README.md "What each step costs"), never in a deployment.
 */
export function upstreamAnswer(
  res: UpstreamResponse,
  options: { preAuth?: boolean; bodyRequired?: boolean; unchecked?: boolean } = {},
): ProxyAnswer {
  return res.status >= 200 && res.status < 300 ? upstreamSuccessAnswer(res, options) : upstreamFailureAnswer(res, options);
}

/**
 * How a key of an upstream answer is compared with {@link INTERNAL_KEYS}: lower-case, without a leading
 * `x-`/`x_`, and without `-` and `_` (`X-Debug`, `client_secret`, `clientSecret` and `CLIENT-SECRET` read alike).
 *
 * @example internalKeyForm('X-Api_Key') // 'apikey'
 */
export function internalKeyForm(key: string): string {
  return key
    .toLowerCase()
    .replace(/^x[-_]/, '')
    .replace(/[-_]/g, '');
}

/** One row of {@link INTERNAL_KEYS}: a key matches when its {@link internalKeyForm} is, starts with or ends with `form`. */
export interface InternalKeyRule {
  readonly match: 'is' | 'starts' | 'ends';
  readonly form: string;
  /** What such a key carries (docs/behaviour.md "The raw passthrough", "Internal keys"). */
  readonly why: string;
}

/**
 * The keys of upstream answers that are internal — debug data, traces, stacks, queries, upstream
 * credentials — and never reach the browser (spec 1.6; docs/behaviour.md "Upstream answers", "Internal
 * keys"), in their {@link internalKeyForm}. A front end's own fields stay: a launch's `url`, `token` and
 * `expires_in`, a game's `key` or `id`.
 */
export const INTERNAL_KEYS: readonly InternalKeyRule[] = [
  { match: 'starts', form: 'debug', why: 'debug data (`debug`, `debugInfo`, `_debug`, `X-Debug`)' },
  { match: 'starts', form: 'internal', why: 'internal fields (`internal`, `internalId`, `internal_token`)' },
  { match: 'is', form: 'trace', why: 'traces' },
  { match: 'is', form: 'traces', why: 'traces' },
  { match: 'is', form: 'traceid', why: 'trace ids (`trace_id`, `traceId`)' },
  { match: 'starts', form: 'stack', why: 'stack traces (`stack`, `stack_trace`, `stacktrace`)' },
  { match: 'is', form: 'exception', why: 'exceptions' },
  { match: 'is', form: 'sql', why: 'queries' },
  { match: 'is', form: 'queries', why: 'queries' },
  { match: 'is', form: 'querylog', why: 'query logs' },
  { match: 'is', form: 'requestlog', why: 'request logs' },
  { match: 'is', form: 'providerrequest', why: "a provider's request" },
  { match: 'is', form: 'providerresponse', why: "a provider's answer" },
  { match: 'is', form: 'providerheaders', why: "a provider's headers" },
  { match: 'is', form: 'rawrequest', why: 'a raw request' },
  { match: 'is', form: 'rawresponse', why: 'a raw answer' },
  { match: 'is', form: 'rawheaders', why: 'raw headers' },
  { match: 'is', form: 'upstreamrequest', why: 'an upstream request (`upstream_request`)' },
  { match: 'is', form: 'upstreamresponse', why: 'an upstream answer' },
  { match: 'is', form: 'upstreamheaders', why: 'upstream headers' },
  { match: 'starts', form: 'credential', why: 'credentials (`credential`, `credentials`)' },
  { match: 'ends', form: 'secret', why: 'secrets (`secret`, `client_secret`, `token_secret`, `apiSecret`)' },
  { match: 'is', form: 'secrets', why: 'secrets' },
  { match: 'ends', form: 'password', why: 'passwords (`password`, `apiPassword`)' },
  { match: 'ends', form: 'passwd', why: 'passwords' },
  { match: 'ends', form: 'passphrase', why: 'passphrases' },
  { match: 'ends', form: 'apikey', why: 'API keys (`api_key`, `apiKey`, `partner_api_key`)' },
  { match: 'ends', form: 'accesskey', why: 'access keys (`access_key`, `accessKey`)' },
  { match: 'ends', form: 'privatekey', why: 'private keys' },
  { match: 'ends', form: 'secretkey', why: 'secret keys' },
  { match: 'ends', form: 'signingkey', why: 'signing keys' },
  { match: 'ends', form: 'encryptionkey', why: 'encryption keys' },
  { match: 'ends', form: 'masterkey', why: 'master keys' },
  { match: 'ends', form: 'operatorkey', why: "an operator's key" },
  { match: 'ends', form: 'operatortoken', why: "an operator's token" },
  { match: 'ends', form: 'providertoken', why: "a provider's token (`providerToken`)" },
  { match: 'ends', form: 'partnertoken', why: "a partner's token" },
  { match: 'ends', form: 'upstreamtoken', why: 'an upstream token' },
  { match: 'is', form: 'accesstoken', why: 'the session token (`access_token`), which travels only in the session cookie' },
  { match: 'is', form: 'refreshtoken', why: 'refresh tokens' },
  { match: 'is', form: 'idtoken', why: 'identity tokens' },
  { match: 'is', form: 'authorization', why: 'authorization headers' },
];

const INTERNAL_IS: ReadonlySet<string> = new Set(INTERNAL_KEYS.filter((r) => r.match === 'is').map((r) => r.form));
const INTERNAL_STARTS: readonly string[] = INTERNAL_KEYS.filter((r) => r.match === 'starts').map((r) => r.form);
const INTERNAL_ENDS: readonly string[] = INTERNAL_KEYS.filter((r) => r.match === 'ends').map((r) => r.form);

/** Whether `key` names internal data ({@link INTERNAL_KEYS}), whatever its case and separators. */
export function isInternalKey(key: string): boolean {
  const form = internalKeyForm(key.replace(/^_+/, ''));
  if (INTERNAL_IS.has(form)) return true;
  for (const start of INTERNAL_STARTS) if (form.startsWith(start)) return true;
  for (const end of INTERNAL_ENDS) if (form.endsWith(end)) return true;
  return false;
}

/**
 * A JSON value without any key {@link isInternalKey} names, at any depth (spec 1.6: proxy answers never
 * carry internal debug data or internal upstream credentials). Returns `value` itself when it holds no
 * such key (so a caller can send the upstream's bytes unchanged); below 32 levels a value is `null`.
 *
 * @example stripDebug({ url: 'https://g/launch', debug: { sql: '…' } }) // { url: 'https://g/launch' }
 */
export function stripDebug(value: unknown, depth = 0): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (depth > 32) return null;
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const child = stripDebug(value[i], depth + 1);
      if (child !== value[i]) (out ??= value.slice())[i] = child;
    }
    return out ?? value;
  }
  let out: Record<string, unknown> | undefined;
  const entries = Object.entries(value);
  for (let i = 0; i < entries.length; i++) {
    const [key, child] = entries[i] as [string, unknown];
    const kept = isInternalKey(key) ? STRIPPED : stripDebug(child, depth + 1);
    if (kept === child && out === undefined) continue;
    if (out === undefined) {
      out = {};
      for (let j = 0; j < i; j++) {
        const [k, v] = entries[j] as [string, unknown];
        own(out, k, v);
      }
    }
    if (kept !== STRIPPED) own(out, key, kept);
  }
  return out ?? value;
}

/** Sets an own property, also one named `__proto__` (which a JSON text may hold) without touching the prototype. */
function own(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}

/** Marks a key {@link stripDebug} leaves out. */
const STRIPPED = Symbol('stripped');

/**
 * The answer for an upstream response whose JSON is cleaned by {@link stripDebug} (game start,
 * sportsbook launch). Failures go through the envelope (spec 7.4).
 */
export function cleanAnswer(res: UpstreamResponse): ProxyAnswer {
  if (res.status < 200 || res.status >= 300) return upstreamFailureAnswer(res);
  if (res.status === 204) return { status: 204, body: null };
  if (res.body.length === 0) return { status: res.status, body: { ok: true } };
  const data = parseJson(res.body);
  if (data === undefined || data === null || typeof data !== 'object') return badResponse();
  return { status: res.status, body: stripDebug(data) as object };
}
