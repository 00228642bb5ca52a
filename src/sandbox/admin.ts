/**
 * Admin and fault-injection API of the sandbox. Every route lives under `/__sandbox/`, needs no
 * token, is never recorded in the request log and is never hit by a fail-next rule.
 *
 * On **every** server (BFF, sticker API, external services), about that server:
 *
 * | route | body / query | answer |
 * |---|---|---|
 * | `GET /__sandbox/health` | | `{ ok: true, server }` |
 * | `GET /__sandbox/requests` | `?method=&path=&since=&limit=` (`path` exact, or a prefix ending in `*`; `since` a `seq`) | `{ server, lastSeq, requests: RecordedRequest[] }`, the last 200 requests, oldest first: method, url, path, headers (`authorization` redacted), `authorization` (present or not), `tokenUserId`, `tokenSessionId`, `cookie` (value or null), body, status, injected |
 * | `DELETE /__sandbox/requests` | | `{ ok: true }`, forgets the recorded requests |
 * | `POST /__sandbox/fail-next` | a `FailRuleInput` or an array of them: `{ method?, path, status, body?, rawBody?, contentType?, headers?, times?, delayMs?, action? }` | 201 `{ ok: true, rules }`; the next `times` (default 1) matching requests get that answer instead of the real one |
 * | `GET /__sandbox/fail-next` | | `{ rules }`, the pending rules |
 * | `DELETE /__sandbox/fail-next` | | `{ ok: true }`, drops pending rules |
 * | `POST /__sandbox/reset` | | `{ ok: true }`; reseeds the whole sandbox (all three servers): users, sessions, codes, area state, request logs, rules |
 *
 * On the **BFF** only (see `bff/admin.ts`):
 *
 * | route | body / query | answer |
 * |---|---|---|
 * | `POST /__sandbox/sessions/expire` | `Authorization: Bearer <jwt>` (that session) or `{ email }` (every session of that user) | `{ ok: true, sessions: n }`; those tokens then answer 401 `token_expired` |
 * | `POST /__sandbox/sessions/revoke` | same | `{ ok: true, sessions: n }`; those tokens then answer 401 `revoked` |
 * | `GET /__sandbox/recovery-codes` | `?login=` (e-mail or document) | the latest recovery code of that user `{ login, userId, code, channel, expiresAt, validatedAt, usedAt }`, 404 when none; without `login`, `{ codes: [...] }` |
 * | `GET /__sandbox/registrations` | `?email=` | `{ registrations: RegistrationRecord[] }` (path, provider, attribution fields, body without password) |
 * | `GET /__sandbox/users` | `?login=` | without `login`: `{ users: [{ id, email, document, twoFactor, cancelled, sessions }] }`; with it: `{ user, userInfo, sessions, state }` (`state`: per-area state by area name) |
 * | `POST /__sandbox/tokens` | `{ login }` | `{ access_token, expires_in, token_type }`: a session for that user without the login flow (2FA and cancellation skipped) |
 *
 * Fail-next examples (spec 7.3, one per 401 family):
 * `{ "path": "/auth/user-profile", "status": 401, "body": { "reason": "ip_changed" } }` (EM0006),
 * `{ "path": "/users/wallet", "status": 401, "rawBody": "Wrong auth refresh!" }` (EM0014),
 * `{ "path": "/auth/login", "action": "reset" }` (connection reset, 502 at the proxy),
 * `{ "path": "/payment-providers", "status": 200, "body": {}, "delayMs": 20000 }` (timeout).
 *
 * @module
 */
import type { SandboxArea } from './context.js';
import { asRecord, sendError } from './http.js';
import { type FailRule, parseFailRule, type RequestFilter } from './traffic.js';

function parseFilter(query: Record<string, unknown>): RequestFilter {
  const filter: RequestFilter = {};
  if (typeof query.method === 'string' && query.method) filter.method = query.method;
  if (typeof query.path === 'string' && query.path) filter.path = query.path;
  const since = Number(query.since);
  if (typeof query.since === 'string' && Number.isFinite(since)) filter.since = since;
  const limit = Number(query.limit);
  if (typeof query.limit === 'string' && Number.isInteger(limit)) filter.limit = limit;
  return filter;
}

/** The admin routes present on every sandbox server (registered by `createSandboxServer`). */
export const commonAdminArea: SandboxArea = {
  name: 'admin',
  prefix: '/__sandbox',
  register(app, ctx) {
    app.get('/health', async () => ({ ok: true, server: ctx.server }));

    app.get('/requests', async (request) => ({
      server: ctx.server,
      lastSeq: ctx.traffic.lastSeq,
      requests: ctx.traffic.list(parseFilter(asRecord(request.query))),
    }));

    app.delete('/requests', async () => {
      ctx.traffic.clearRequests();
      return { ok: true };
    });

    app.post('/fail-next', async (request, reply) => {
      const inputs = Array.isArray(request.body) ? request.body : [request.body];
      const parsed = inputs.map(parseFailRule);
      const problem = parsed.find((p) => typeof p === 'string');
      if (typeof problem === 'string') return sendError(reply, 400, 'invalid_rule', problem);
      const rules: FailRule[] = [];
      for (const input of parsed) if (typeof input !== 'string') rules.push(ctx.traffic.failNext(input));
      return reply.code(201).send({ ok: true, rules });
    });

    app.get('/fail-next', async () => ({ rules: ctx.traffic.rules }));

    app.delete('/fail-next', async () => {
      ctx.traffic.clearRules();
      return { ok: true };
    });

    app.post('/reset', async () => {
      ctx.store.reset();
      return { ok: true };
    });
  },
};
