/**
 * The session guard of the sandbox BFF, for every authenticated upstream endpoint.
 *
 * The token is read from `Authorization: Bearer <jwt>` only (docs/behaviour.md "Upstream requests");
 * a session cookie alone is not enough. Whether a `Cookie` header came along is recorded for every
 * request in the request log (`GET /__sandbox/requests`, `store.traffic.bff`).
 *
 * 401 bodies (spec 7.3 families):
 *
 * | case | body |
 * |---|---|
 * | no `Authorization: Bearer` | `{ "reason": "no_token", "message": "User not logged in" }` (EM0001) |
 * | bad signature, malformed, unknown session, unknown user | `{ "reason": "invalid_token", "message": "Token is invalid" }` (EM0002) |
 * | past `exp`, expired by the admin API, or replaced by a refresh after the grace period | `{ "reason": "token_expired", "message": "Token has expired" }` (EM0003) |
 * | after logout or the admin revoke | `{ "reason": "revoked", "message": "Token has been revoked" }` (EM0004) |
 *
 * @module
 */
import type { FastifyReply, FastifyRequest, RouteGenericInterface } from 'fastify';
import { sandboxContext } from '../context.js';
import type { SandboxSession, SandboxUser } from '../types.js';

/** Why a request has no valid session. */
export type GuardFailure = 'no_token' | 'invalid_token' | 'token_expired' | 'revoked';

/** The 401 body of each {@link GuardFailure}. */
export const GUARD_BODIES: Readonly<Record<GuardFailure, { readonly reason: GuardFailure; readonly message: string }>> = Object.freeze({
  no_token: { reason: 'no_token', message: 'User not logged in' },
  invalid_token: { reason: 'invalid_token', message: 'Token is invalid' },
  token_expired: { reason: 'token_expired', message: 'Token has expired' },
  revoked: { reason: 'revoked', message: 'Token has been revoked' },
});

/** A request with a valid session. */
export interface Authenticated {
  user: SandboxUser;
  session: SandboxSession;
}

/** The Bearer token of a request, or null. */
export function bearerToken(request: FastifyRequest): string | null {
  const header = request.headers.authorization;
  if (typeof header !== 'string') return null;
  const match = /^bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1] ?? null;
}

/**
 * Resolves the session of a request without answering.
 *
 * @returns the user and session, or why there is none
 */
export async function authenticate(request: FastifyRequest): Promise<Authenticated | GuardFailure> {
  const { store, tokens } = sandboxContext(request);
  const token = bearerToken(request);
  if (token === null) return 'no_token';
  const check = await tokens.verify(token);
  if (!('claims' in check)) return 'invalid_token';
  const { claims } = check;
  const session = store.sessions.get(claims.sessionId);
  if (!session || session.userId !== claims.userId) return 'invalid_token';
  if (session.revokedAt !== null) return 'revoked';
  if (!check.ok || session.expiresAt <= store.now()) return 'token_expired';
  const user = store.users.get(session.userId);
  if (!user) return 'invalid_token';
  return { user, session };
}

/**
 * The session of a request, or a 401 already sent (then return `reply` from the handler).
 *
 * @example
 * const auth = await requireSession(request, reply);
 * if (!auth) return reply;
 */
export async function requireSession(request: FastifyRequest, reply: FastifyReply): Promise<Authenticated | null> {
  const result = await authenticate(request);
  if (typeof result === 'string') {
    reply.code(401).send(GUARD_BODIES[result]);
    return null;
  }
  return result;
}

/**
 * The user of a request, or a 401 already sent with the body of {@link GUARD_BODIES}
 * (then return `reply` from the handler).
 *
 * @example
 * app.get('/users/wallet', async (request, reply) => {
 *   const user = await requireUser(request, reply);
 *   if (!user) return reply;
 *   return user.profile.wallet;
 * });
 */
export async function requireUser(request: FastifyRequest, reply: FastifyReply): Promise<SandboxUser | null> {
  return (await requireSession(request, reply))?.user ?? null;
}

/**
 * Wraps a handler so it runs only with a valid session; otherwise answers 401 like
 * {@link requireUser}.
 *
 * @example
 * app.get('/users/wallet', withUser(async (_request, _reply, user) => user.profile.wallet));
 */
export function withUser<R extends RouteGenericInterface = RouteGenericInterface>(
  handler: (request: FastifyRequest<R>, reply: FastifyReply<R>, user: SandboxUser, session: SandboxSession) => unknown,
): (request: FastifyRequest<R>, reply: FastifyReply<R>) => Promise<unknown> {
  return async (request, reply) => {
    const result = await authenticate(request as FastifyRequest);
    if (typeof result === 'string') return (reply as FastifyReply).code(401).send(GUARD_BODIES[result]);
    return handler(request, reply, result.user, result.session);
  };
}
