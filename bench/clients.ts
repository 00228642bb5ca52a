/**
 * The clients the benchmark's load stands for: many sessions, each with its own JWT-shaped session
 * token, and as many client addresses behind a load balancer (`X-Forwarded-For`). Production limits
 * count per session (`RATE_LIMIT_API_PER_MIN`, 600 a minute) or, without a session, per client address
 * (docs/behaviour.md "Rate limits and client address"): spread over enough clients, a bench's load never
 * reaches them, as real traffic of that volume would not.
 *
 * @module
 */

/** The session cookie name of the proxy in production (docs/behaviour.md "Session cookie"). */
export const COOKIE_NAME = '__Host-access_token';

/** Sessions (and client addresses) of a bench run when `BENCH_SESSIONS` is not set. */
export const DEFAULT_SESSIONS = 4096;

/** Expiry of every bench token (2100-01-01, seconds since the epoch): never reached. */
const TOKEN_EXPIRY = 4_102_444_800;

const base64url = (text: string) => Buffer.from(text).toString('base64url');
const TOKEN_HEADER = base64url('{"alg":"HS256","typ":"JWT"}');
/** A signature-shaped third part: the proxy never verifies tokens, the bench upstream accepts any. */
const TOKEN_SIGNATURE = base64url('bench-signature-not-verified');

/**
 * The JWT-shaped session token of client `n`: header, payload `{"sub":"<n>","exp":4102444800}` and a
 * signature, each base64url.
 */
export function sessionToken(n: number): string {
  return `${TOKEN_HEADER}.${base64url(`{"sub":"${n}","exp":${TOKEN_EXPIRY}}`)}.${TOKEN_SIGNATURE}`;
}

/** The `Cookie` header of client `n`'s browser: a first-party preference cookie and the session cookie. */
export function sessionCookie(n: number): string {
  return `theme=dark; ${COOKIE_NAME}=${sessionToken(n)}`;
}

/**
 * The address of client `n` as the load balancer reports it in `X-Forwarded-For`: `10.a.b.c` with
 * `c` from 1 to 250, distinct for the first 16,384,000 clients.
 */
export function clientAddress(n: number): string {
  const c = (n % 250) + 1;
  const b = Math.floor(n / 250) % 256;
  const a = Math.floor(n / 64_000) % 256;
  return `10.${a}.${b}.${c}`;
}

/**
 * The per-request headers of `count` clients, in the order the load generator takes them: each with
 * its own `X-Forwarded-For` address and, when `withSession`, its own session cookie.
 */
export function clientHeaders(count: number, withSession: boolean): Record<string, string>[] {
  const out: Record<string, string>[] = [];
  for (let n = 0; n < count; n++) {
    out.push(withSession ? { cookie: sessionCookie(n), 'x-forwarded-for': clientAddress(n) } : { 'x-forwarded-for': clientAddress(n) });
  }
  return out;
}
