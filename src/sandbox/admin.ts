/**
 * Admin and fault-injection API of the sandbox. Every route lives under `/__sandbox/`, needs no
 * token, is never recorded in the request log and is never hit by a fail-next or fault rule.
 *
 * On **every** server (BFF, sticker API, external services), about that server:
 *
 * | route | body / query | answer |
 * |---|---|---|
 * | `GET /__sandbox/health` | | `{ ok: true, server }` |
 * | `GET /__sandbox/requests` | `?method=&path=&since=&limit=` (`path` exact, or a prefix ending in `*`; `since` a `seq`) | `{ server, lastSeq, requests: RecordedRequest[] }`, the last 200 requests, oldest first: method, url, path, headers (`authorization` redacted), `authorization` (present or not), `tokenUserId`, `tokenSessionId`, `cookie` (value or null), body, status, injected, fault (`slow`, `hang`, `fail` or null) |
 * | `DELETE /__sandbox/requests` | | `{ ok: true }`, forgets the recorded requests |
 * | `POST /__sandbox/fail-next` | a `FailRuleInput` or an array of them: `{ method?, path, status, body?, rawBody?, contentType?, headers?, times?, delayMs?, action? }` | 201 `{ ok: true, rules }`; the next `times` (default 1) matching requests get that answer instead of the real one |
 * | `GET /__sandbox/fail-next` | | `{ rules }`, the pending rules |
 * | `DELETE /__sandbox/fail-next` | | `{ ok: true }`, drops pending rules |
 * | `POST /__sandbox/faults` | a `FaultRuleInput` or an array of them: `{ method?, path, delayMs }` (slow: the real answer after `delayMs` ms), `{ method?, path, hang: true }` (hangs: no answer until the client leaves or the rule goes), `{ method?, path, status, body?, rawBody?, contentType?, headers?, delayMs? }` (fails: that answer, after `delayMs` when given) | 201 `{ ok: true, rules: FaultRule[] }`; the rules stand until removed. A rule for the same `method` (or any) and `path` replaces the standing one. 400 `invalid_rule` (unknown field, `delayMs` outside 0–120 000, `hang` with `delayMs` or `status`, body over 64 KiB…), 400 `too_many_rules` (over 50 per server) |
 * | `GET /__sandbox/faults` | | `{ rules, held, limits }`: the standing rules `{ id, kind: "slow" \| "hang" \| "fail", method?, path, delayMs?, hang?, status?, …, createdAt, hits, held }`, the requests held now (delayed or hung) and `{ maxRules, maxDelayMs, maxHeldRequests, maxBodyChars }` |
 * | `DELETE /__sandbox/faults` | `?path=` (the rule's path as written, e.g. `/casino-games/*`) `&method=`; every rule without them | `{ ok: true, removed, released }`; the requests those rules held get their real answer at once |
 * | `POST /__sandbox/reset` | | `{ ok: true }`; reseeds the whole sandbox (all three servers): users, sessions, codes, area state, request logs, fail-next and fault rules (held requests get their real answer) |
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
 * Fault rules (`faults.ts`) differ from fail-next rules in that they stay: "this endpoint is slow,
 * hangs, fails" until `DELETE /__sandbox/faults` or a reset. A request matching a fail-next rule
 * gets that answer; only the others meet the fault rules. Requests a rule holds (delayed or hung)
 * are released with their real answer when the rule goes, and their connections destroyed when the
 * server closes; at most 1000 are held per server (beyond that the new request's connection is
 * destroyed at once). Examples:
 * `{ "path": "/users/wallet", "delayMs": 8000 }` (slow endpoint),
 * `{ "method": "GET", "path": "/casino-games/list/*", "hang": true }` (hung endpoint),
 * `{ "path": "/auth/user-profile", "status": 503, "body": { "message": "Service Unavailable" } }` (failing endpoint).
 *
 * @module
 */
import type { SandboxArea } from './context.js';
import { asRecord, sendError } from './http.js';
import { type FaultRuleInput, parseFaultRule, TooManyFaultRulesError } from './faults.js';
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

    const faults = ctx.store.faults[ctx.server];

    app.post('/faults', async (request, reply) => {
      const inputs: unknown[] = Array.isArray(request.body) ? request.body : [request.body];
      if (inputs.length === 0 || inputs.length > faults.limits.maxRules) {
        return sendError(reply, 400, 'invalid_rule', `give 1 to ${faults.limits.maxRules} rules`);
      }
      const parsed = inputs.map((input) => parseFaultRule(input, faults.limits));
      const problem = parsed.find((p) => typeof p === 'string');
      if (typeof problem === 'string') return sendError(reply, 400, 'invalid_rule', problem);
      try {
        const rules = faults.add(parsed as FaultRuleInput[]);
        request.log.info({ rules: rules.map((r) => ({ method: r.method, path: r.path, kind: r.kind })) }, 'sandbox fault rules set');
        return reply.code(201).send({ ok: true, rules });
      } catch (error) {
        if (error instanceof TooManyFaultRulesError) return sendError(reply, 400, 'too_many_rules', error.message);
        throw error;
      }
    });

    app.get('/faults', async () => ({ rules: faults.list(), held: faults.heldCount, limits: faults.limits }));

    app.delete('/faults', async (request) => {
      const query = asRecord(request.query);
      const filter: { path?: string; method?: string } = {};
      if (typeof query.path === 'string' && query.path) filter.path = query.path;
      if (typeof query.method === 'string' && query.method) filter.method = query.method;
      return { ok: true, ...faults.remove(filter) };
    });

    app.post('/reset', async () => {
      ctx.store.reset();
      return { ok: true };
    });
  },
};
