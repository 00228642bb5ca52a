/**
 * Pipeline step **session cookie** (`onSend`; docs/behaviour.md "Upstream answers", "A session comes only
 * from a whole, valid answer"): the one place that writes a new session cookie. A route asks for it
 * with `setSessionCookie` (login, registration, social login, refresh); it is written here once the
 * answer is final, and only when the answer's status is below 400 — an error answer, including one
 * that replaced a success whose body could not be written, never carries a session.
 *
 * @module
 */
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { commitSessionCookie } from '../session/cookie.js';

/** Writes the session cookie a route asked for, on successful answers only (see the module documentation). */
export const sessionCookie = fp(
  async (app: FastifyInstance) => {
    app.decorateReply('pendingSession', undefined);
    app.addHook('onSend', (_request, reply, payload, done) => {
      if (reply.pendingSession !== undefined) commitSessionCookie(reply);
      done(null, payload);
    });
  },
  // Registered before the auth gate (which registers @fastify/cookie): onSend hooks run in the order
  // they were added, and the cookie plugin writes Set-Cookie in its own.
  { name: 'session-cookie' },
);
