/**
 * The sticker API handshake (spec 4.9, 5.6): `POST /auth/token` with a valid BFF session
 * (`Authorization: Bearer <jwt>`) answers `{ access_token, token_type: "bearer", expires_in }`, a
 * sticker token valid {@link STICKER_TOKEN_TTL_SECONDS} seconds. Every other sticker route needs that
 * token as its Bearer; the BFF JWT itself is refused there.
 *
 * 401 bodies: the BFF guard's (`no_token`, `invalid_token`, `token_expired`, `revoked`) on the
 * handshake; `{ reason: "invalid_sticker_token" }` on the other routes for a missing, unknown or
 * expired sticker token.
 *
 * Admin (sticker server): `POST /__sandbox/sticker-tokens/expire` expires every sticker token.
 *
 * @module
 */
import { randomBytes } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { authenticate, bearerToken, GUARD_BODIES } from '../bff/guard.js';
import type { SandboxArea } from '../context.js';
import { sandboxContext } from '../context.js';
import { defineAreaState } from '../store.js';
import type { SandboxUser } from '../types.js';

/** Lifetime of a sticker token, in seconds. */
export const STICKER_TOKEN_TTL_SECONDS = 900;

/** Sticker tokens issued: token → user id and expiry (epoch ms). */
export const stickerTokens = defineAreaState('sticker.tokens', () => new Map<string, { userId: number; expiresAt: number }>());

/** Handshakes answered so far (for tests that check the proxy reuses its token). */
export const handshakeCount = defineAreaState('sticker.handshakes', () => ({ count: 0 }));

/**
 * The user of a sticker request (Bearer = a sticker token), or a 401 already sent (then return
 * `reply` from the handler).
 */
export function requireStickerUser(request: FastifyRequest, reply: FastifyReply): SandboxUser | null {
  const { store } = sandboxContext(request);
  const token = bearerToken(request);
  const entry = token === null ? undefined : store.areaState(stickerTokens).get(token);
  const user = entry && entry.expiresAt > store.now() ? store.users.get(entry.userId) : undefined;
  if (!user) {
    reply.code(401).send({ reason: 'invalid_sticker_token', message: 'Sticker token is missing, unknown or expired' });
    return null;
  }
  return user;
}

/** The handshake area of the sticker API. */
export const stickerHandshakeArea: SandboxArea = {
  name: 'sticker-handshake',
  register(app, ctx) {
    app.post('/auth/token', async (request, reply) => {
      const auth = await authenticate(request);
      if (typeof auth === 'string') return reply.code(401).send(GUARD_BODIES[auth]);
      ctx.store.areaState(handshakeCount).count++;
      const token = `stk_${randomBytes(16).toString('hex')}`;
      ctx.store.areaState(stickerTokens).set(token, {
        userId: auth.user.id,
        expiresAt: ctx.store.now() + STICKER_TOKEN_TTL_SECONDS * 1000,
      });
      return { access_token: token, token_type: 'bearer', expires_in: STICKER_TOKEN_TTL_SECONDS };
    });

    app.post('/__sandbox/sticker-tokens/expire', async () => {
      const tokens = ctx.store.areaState(stickerTokens);
      for (const entry of tokens.values()) entry.expiresAt = 0;
      return { ok: true, tokens: tokens.size };
    });
  },
};
