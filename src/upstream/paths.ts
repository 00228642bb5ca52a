/**
 * Safe building of upstream paths and query strings from input (CONTRACT.md "Upstream requests"):
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

/** Characters a path value may never contain after one decoding: separators, escapes, controls, traversal look-alikes. */
const FORBIDDEN = /[/\\%?#;@:\u0000-\u001f\u007f\u2024\u2025\u2026\uff0e\uff0f\uff3c]/;

/**
 * Checks one path value taken from input and returns it percent-encoded.
 *
 * @param field - the parameter's name, for the error message (e.g. `transactionId`).
 * @param value - the decoded value (Fastify decodes path and query once).
 * @throws {@link UnsafePathError} when the value is empty, longer than 256 characters, `.` or `..`,
 *   or contains a separator, `%`, `?`, `#`, `;`, `@`, `:`, a control character or a full-width dot/slash.
 */
export function safeSegment(field: string, value: unknown): string {
  if (typeof value !== 'string' && typeof value !== 'number') throw new UnsafePathError(field, 'is required');
  const text = String(value);
  if (text.length === 0) throw new UnsafePathError(field, 'must not be empty');
  if (text.length > 256) throw new UnsafePathError(field, 'is too long');
  if (text === '.' || text === '..' || text.includes('..')) throw new UnsafePathError(field, 'must not contain ".."');
  if (FORBIDDEN.test(text)) throw new UnsafePathError(field, 'contains a character that is not allowed in a path');
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
