/**
 * Safe building of upstream paths and query strings from input (docs/behaviour.md "Upstream requests"):
 * a value taken from input becomes exactly one percent-encoded path segment and can never climb
 * out of its route.
 *
 * @module
 */

/** Thrown when an input value cannot be placed in an upstream path; routes answer 400 `invalid_request`. */
export class UnsafePathError extends Error {
  readonly field: string;
  constructor(field: string, reason: string) {
    super(`${field} ${reason}`);
    this.name = 'UnsafePathError';
    this.field = field;
  }
}

/** ASCII characters a path value may never contain after one decoding: separators, escapes, controls. */
const FORBIDDEN_ASCII = /[/\\%?#;@:\u0000-\u001f\u007f]/;

/** What a look-alike becomes under compatibility normalisation: a dot, a slash or a backslash. */
const TRAVERSAL_NFKC = /[./\\]/;

/**
 * Whether one non-ASCII character is a traversal look-alike: its compatibility normalisation (NFKC,
 * from the Unicode data of the running engine) contains `.`, `/` or `\` — the one-dot leader U+2024,
 * the ellipsis U+2026, the full-width and small full stops U+FF0E and U+FE52, the full-width solidus
 * U+FF0F, the full-width and small reverse solidus U+FF3C and U+FE68, "1." U+2488 and every other
 * one, whatever the Unicode version. ASCII characters are judged by the rules of {@link safeSegment}.
 *
 * @param char - one character (one code point, possibly a surrogate pair).
 */
export function isTraversalLookAlike(char: string): boolean {
  const code = char.codePointAt(0) ?? 0;
  return code > 0x7f && TRAVERSAL_NFKC.test(char.normalize('NFKC'));
}

/** Whether a text holds a lone surrogate (not encodable) or a traversal look-alike. */
function hasUnsafeNonAscii(text: string): boolean {
  for (const char of text) {
    const code = char.charCodeAt(0);
    if (code <= 0x7f) continue;
    if (code >= 0xd800 && code <= 0xdfff && char.length === 1) return true;
    if (isTraversalLookAlike(char)) return true;
  }
  return false;
}

/**
 * Checks one path value taken from input and returns it percent-encoded.
 *
 * @param field - the parameter's name, for the error message (e.g. `transactionId`).
 * @param value - the decoded value (Fastify decodes path and query once).
 * @throws {@link UnsafePathError} when the value is empty, longer than 256 characters, `.` or `..`,
 *   contains `..`, a separator, `%`, `?`, `#`, `;`, `@`, `:`, a control character, a lone surrogate,
 *   or a character whose compatibility normalisation contains `.`, `/` or `\`
 *   ({@link isTraversalLookAlike}: full-width, small and leader dots and slashes). A single ASCII dot
 *   inside a name (`file.pdf`) is allowed.
 */
export function safeSegment(field: string, value: unknown): string {
  if (typeof value !== 'string' && typeof value !== 'number') throw new UnsafePathError(field, 'is required');
  const text = String(value);
  if (text.length === 0) throw new UnsafePathError(field, 'must not be empty');
  if (text.length > 256) throw new UnsafePathError(field, 'is too long');
  if (text === '.' || text === '..' || text.includes('..')) throw new UnsafePathError(field, 'must not contain ".."');
  if (FORBIDDEN_ASCII.test(text) || hasUnsafeNonAscii(text)) {
    throw new UnsafePathError(field, 'contains a character that is not allowed in a path');
  }
  return encodeURIComponent(text);
}

/**
 * Fills a path template such as `/wallet/charge/{transactionId}` with safe segments.
 *
 * @example
 * buildPath('/wallet/charge/{transactionId}', { transactionId: 'ch_12' }) // '/wallet/charge/ch_12'
 * @throws {@link UnsafePathError} for an unsafe or missing value.
 */
export function buildPath(template: string, values: Record<string, unknown> = {}): string {
  // Most rows' paths have no `{name}` segment: the template is the path.
  if (!template.includes('{')) return template;
  return template.replace(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, name: string) => safeSegment(name, values[name]));
}

/** A query value: a string, a number, a boolean, or a list of those (repeated keys). */
export type QueryValue = string | number | boolean | readonly (string | number | boolean)[] | undefined | null;

/**
 * Encodes a query object as `?a=1&b=2` (empty string when nothing is set). Keys are emitted in the
 * order given; `undefined` and `null` values are left out; arrays repeat the key.
 */
export function buildQuery(query: Readonly<Record<string, QueryValue>> | undefined): string {
  if (!query) return '';
  let out = '';
  for (const key of Object.keys(query)) {
    const value = query[key];
    if (value === undefined || value === null) continue;
    const list = Array.isArray(value) ? value : [value];
    for (const item of list) {
      out += `${out ? '&' : '?'}${encodeURIComponent(key)}=${encodeURIComponent(String(item))}`;
    }
  }
  return out;
}

/** Upstream of the first-party sportsbook search (spec 4.7, also used by `/api/search/unified`, spec 4.6). */
export const SPORTS_SEARCH_PATH = '/core-sportbook/search';

/** Longest raw query string passed through by {@link rawSubPath}, in characters. */
export const MAX_RAW_QUERY = 4096;

/** A raw sub-path that passed {@link rawSubPath}. */
export interface RawSubPath {
  /** The upstream path: the upstream prefix plus the checked segments, each percent-encoded once. */
  path: string;
  /** The raw query string including `?`, or `''`. */
  rawQuery: string;
}

const ENCODED_FORBIDDEN = /%(?:25|2e|2f|5c|3b|3f|23|00|[01][0-9a-f]|7f)/i;

/**
 * Checks the raw request URL (as received, before any decoding; in absolute form, its path) of a
 * wildcard route and returns the upstream path built from its segments. Used by `/api/core-sportbook/*` and `/api/dev/proxy/*`.
 *
 * Refused (400 `invalid_request` through {@link UnsafePathError}, before any upstream call): a URL
 * outside `routePrefix`; an empty sub-path; bytes outside printable ASCII (controls, NUL, spaces,
 * raw full-width characters); `\`, `;`, `//`; a malformed escape; the escapes of `%` (double
 * encoding), `.`, `/`, `\`, `;`, `?`, `#` and control characters; a segment that is `.` or `..` or
 * that decodes to something {@link safeSegment} refuses (`..`, look-alikes of `.`, `/` and `\` such
 * as full-width and small dots and slashes, see {@link isTraversalLookAlike}); a raw
 * query longer than {@link MAX_RAW_QUERY} or with bytes outside printable ASCII. One trailing `/` is kept;
 * a `#fragment` is dropped (never sent upstream).
 *
 * @example rawSubPath('/api/core-sportbook/events/12?live=1', '/api/core-sportbook/', '/core-sportbook/')
 * // { path: '/core-sportbook/events/12', rawQuery: '?live=1' }
 * @throws {@link UnsafePathError}
 */
export function rawSubPath(rawUrl: string, routePrefix: string, upstreamPrefix: string): RawSubPath {
  // An absolute-form target (`http://host/api/...`, RFC 9112 3.2.2) is routed like its path: judge that path.
  const origin = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*/.exec(rawUrl);
  if (origin) rawUrl = rawUrl.slice(origin[0].length);
  // A fragment is the client's own (RFC 9110 4.2.4); it has no place in a request target sent upstream.
  const hash = rawUrl.indexOf('#');
  if (hash !== -1) rawUrl = rawUrl.slice(0, hash);
  const q = rawUrl.indexOf('?');
  const rawPath = q < 0 ? rawUrl : rawUrl.slice(0, q);
  const rawQuery = q < 0 ? '' : rawUrl.slice(q);
  if (!rawPath.startsWith(routePrefix)) throw new UnsafePathError('path', 'is outside the route');
  const rest = rawPath.slice(routePrefix.length);
  if (rest.length === 0) throw new UnsafePathError('path', 'needs a sub-path');
  if (!/^[\x21-\x7e]+$/.test(rest)) throw new UnsafePathError('path', 'contains a character that is not allowed');
  if (/[\\;]/.test(rest) || rest.includes('//') || rest.startsWith('/')) {
    throw new UnsafePathError('path', 'contains a separator that is not allowed');
  }
  if (/%(?![0-9A-Fa-f]{2})/.test(rest)) throw new UnsafePathError('path', 'contains a malformed escape');
  if (ENCODED_FORBIDDEN.test(rest)) throw new UnsafePathError('path', 'contains an escape that is not allowed');
  const trailing = rest.endsWith('/');
  const segments = (trailing ? rest.slice(0, -1) : rest).split('/').map((raw) => {
    let decoded: string;
    try {
      decoded = decodeURIComponent(raw);
    } catch {
      throw new UnsafePathError('path', 'contains a malformed escape');
    }
    if (decoded === '.' || decoded === '..') throw new UnsafePathError('path', 'must not contain "." or ".." segments');
    return safeSegment('path', decoded);
  });
  if (rawQuery.length > MAX_RAW_QUERY + 1) throw new UnsafePathError('query', 'is too long');
  if (rawQuery.length > 0 && !/^\?[\x21-\x7e]*$/.test(rawQuery)) {
    throw new UnsafePathError('query', 'contains a character that is not allowed');
  }
  return { path: `${upstreamPrefix}${segments.join('/')}${trailing ? '/' : ''}`, rawQuery: rawQuery === '?' ? '' : rawQuery };
}
