/**
 * The session state for a server's first render: `readSession` asks the proxy's
 * `GET /api/auth/session` with the browser's `Cookie` header (from a Next.js server component, a
 * Remix or React Router loader, an Express handler), so that the first HTML is already signed in or
 * out (`<ProxySessionProvider initialSession>` of `@front-proxy/react`). Uses `fetch` only: Node 20+,
 * Deno, Bun and edge runtimes.
 *
 * @example
 * // app/layout.tsx (a Next.js server component)
 * const session = await readSession({ baseUrl: process.env.FRONT_PROXY_URL, cookie: (await cookies()).toString() });
 *
 * @module
 */
import { SESSION_ROUTE_PATH } from './proxy-client.js';
import { type SessionSnapshot, UNKNOWN_SESSION } from './session.js';
import type { SessionStateResult } from './types.js';

/** Default deadline of {@link readSession}, in milliseconds: a first render does not wait longer. */
export const READ_SESSION_TIMEOUT_MS = 2_000;

/** Options of {@link readSession}. */
export interface ReadSessionOptions {
  /** Origin of the proxy as the server reaches it, e.g. `'http://front-proxy:3000'` (no trailing path). */
  readonly baseUrl: string;
  /** The browser request's `Cookie` header as it came (the session cookie among the others), or `null`/`''` for none. */
  readonly cookie: string | null | undefined;
  /** The fetch implementation; default the global `fetch`. */
  readonly fetch?: typeof fetch;
  /** Deadline in ms; default {@link READ_SESSION_TIMEOUT_MS}. */
  readonly timeoutMs?: number;
}

/**
 * The state an answer of `GET /api/auth/session` gives: `{ signedIn: true, expiresAt }` → `signedIn`,
 * `{ signedIn: false }` → `signedOut`, anything else → `unknown`.
 */
export function sessionFromAnswer(answer: unknown): SessionSnapshot {
  const a = answer as Partial<SessionStateResult & { expiresAt: unknown }> | null;
  if (typeof a !== 'object' || a === null || typeof a.signedIn !== 'boolean') return UNKNOWN_SESSION;
  if (!a.signedIn) return { status: 'signedOut', expiresAt: null, error: null };
  const expiresAt = typeof a.expiresAt === 'number' && Number.isFinite(a.expiresAt) ? Math.floor(a.expiresAt) : null;
  return { status: 'signedIn', expiresAt, error: null };
}

/**
 * Asks `GET {baseUrl}/api/auth/session` with the browser's cookies and returns the session state:
 * `signedIn` (with `expiresAt`, epoch seconds) or `signedOut`; `signedOut` at once, without a request,
 * when there is no cookie at all. Never rejects: a network failure, a non-2xx answer, a body that is
 * not the route's, or the deadline passed gives `unknown` (the page then asks itself, in the browser).
 * The cookie is sent only to `baseUrl` and never logged or returned.
 */
export async function readSession(options: ReadSessionOptions): Promise<SessionSnapshot> {
  const cookie = options.cookie ?? '';
  if (cookie.trim() === '') return { status: 'signedOut', expiresAt: null, error: null };
  const fetchImpl = options.fetch ?? globalThis.fetch;
  try {
    const answer = await fetchImpl(`${options.baseUrl.replace(/\/+$/, '')}${SESSION_ROUTE_PATH}`, {
      method: 'GET',
      headers: { accept: 'application/json', cookie },
      redirect: 'manual',
      signal: AbortSignal.timeout(options.timeoutMs ?? READ_SESSION_TIMEOUT_MS),
    });
    if (!answer.ok) {
      await answer.body?.cancel();
      return UNKNOWN_SESSION;
    }
    return sessionFromAnswer(await answer.json());
  } catch {
    return UNKNOWN_SESSION;
  }
}
