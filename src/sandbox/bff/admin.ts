/**
 * BFF-only admin routes under `/__sandbox/`: expire or revoke sessions, read recovery codes,
 * registrations and users, mint a token. The whole admin API is documented in `../admin.ts`.
 *
 * @module
 */
import type { FastifyRequest } from 'fastify';
import type { SandboxArea, SandboxContext } from '../context.js';
import { asRecord, sendError } from '../http.js';
import type { RecoveryCode } from '../store.js';
import type { SandboxSession } from '../types.js';
import { bearerToken } from './guard.js';
import { issueToken } from './session.js';

/** Sessions named by an admin request: the Bearer token's, or every session of `{ email }`. */
async function targetSessions(ctx: SandboxContext, request: FastifyRequest): Promise<SandboxSession[] | string> {
  const body = asRecord(request.body);
  const login = body.email ?? body.login;
  if (typeof login === 'string' && login !== '') {
    const user = ctx.store.findUserByLogin(login);
    if (!user) return `no user for ${login}`;
    return ctx.store.sessionsOf(user.id);
  }
  const token = bearerToken(request);
  if (token === null) return 'send Authorization: Bearer <token> or { "email": "..." }';
  const check = await ctx.tokens.verify(token);
  if (!('claims' in check)) return 'the token was not issued by this sandbox';
  const session = ctx.store.sessions.get(check.claims.sessionId);
  return session ? [session] : 'unknown session';
}

function codeView(code: RecoveryCode) {
  return {
    login: code.login,
    userId: code.userId,
    code: code.code,
    channel: code.channel,
    expiresAt: code.expiresAt,
    validatedAt: code.validatedAt,
    usedAt: code.usedAt,
    attempts: code.attempts,
  };
}

/** The BFF admin area. */
export const bffAdminArea: SandboxArea = {
  name: 'bff-admin',
  prefix: '/__sandbox',
  register(app, ctx) {
    const { store } = ctx;

    app.post('/sessions/expire', async (request, reply) => {
      const sessions = await targetSessions(ctx, request);
      if (typeof sessions === 'string') return sendError(reply, 400, 'invalid_target', sessions);
      for (const session of sessions) store.expireSession(session.id);
      return { ok: true, sessions: sessions.length };
    });

    app.post('/sessions/revoke', async (request, reply) => {
      const sessions = await targetSessions(ctx, request);
      if (typeof sessions === 'string') return sendError(reply, 400, 'invalid_target', sessions);
      for (const session of sessions) store.revokeSession(session.id, 'admin');
      return { ok: true, sessions: sessions.length };
    });

    app.get('/recovery-codes', async (request, reply) => {
      const { login } = asRecord(request.query);
      if (typeof login !== 'string' || login === '') {
        return { codes: [...store.recoveryCodes.values()].map(codeView) };
      }
      const user = store.findUserByLogin(login);
      const code = user ? store.recoveryCodes.get(user.id) : undefined;
      if (!code) return sendError(reply, 404, 'not_found', `no recovery code for ${login}`);
      return codeView(code);
    });

    app.get('/registrations', async (request) => {
      const { email } = asRecord(request.query);
      const wanted = typeof email === 'string' ? email.toLowerCase() : null;
      return { registrations: store.registrations.filter((r) => wanted === null || r.email.toLowerCase() === wanted) };
    });

    app.get('/users', async (request, reply) => {
      const { login } = asRecord(request.query);
      if (typeof login !== 'string' || login === '') {
        return {
          users: [...store.users.values()].map((u) => ({
            id: u.id,
            email: u.profile.email,
            document: u.profile.document?.number ?? null,
            twoFactor: u.twoFactorCode !== null,
            cancelled: u.profile.cancelled_account === 1,
            sessions: store.sessionsOf(u.id).length,
          })),
        };
      }
      const user = store.findUserByLogin(login);
      if (!user) return sendError(reply, 404, 'not_found', `no user for ${login}`);
      return {
        user: user.profile,
        userInfo: user.info,
        sessions: store.sessionsOf(user.id),
        state: store.userStateSnapshot(user.id),
      };
    });

    app.post('/tokens', async (request, reply) => {
      const { login } = asRecord(request.body);
      if (typeof login !== 'string' || login === '') return sendError(reply, 400, 'invalid_target', 'send { "login": "..." }');
      const user = store.findUserByLogin(login);
      if (!user) return sendError(reply, 404, 'not_found', `no user for ${login}`);
      const { token } = await issueToken(store, ctx.tokens, user);
      return token;
    });
  },
};
