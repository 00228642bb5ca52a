/**
 * spec 4.10 External services: first-deposit cashback (two external function endpoints) and the
 * server-to-server attribution event (spec 6.3). Rows in the specification's order.
 *
 * The service URLs are whole endpoints (`FTD_CASHBACK_VERIFY_URL`, `FTD_CASHBACK_SEND_URL`,
 * `ATTRIBUTION_S2S_URL`); when one is not set the route answers 503 `not_configured` (docs/behaviour.md "Configuration").
 *
 * Bodies (spec 4.12 leaves them open; the proxy's choice):
 *
 * | route | body |
 * |---|---|
 * | `POST /api/ftd-cashback/verify`, `/send-cashback` | `{ userId?, depositId?, transactionId? }`, unknown fields refused; `userId` is sent as the session user's id (`user.id` of the profile), whatever the client wrote |
 * | `POST /api/tracking/attribution` | {@link AttributionEvent}: its known fields checked, any other scalar field forwarded |
 *
 * The cashback calls act for the user: they carry the session (`Authorization: Bearer`, `Cookie`)
 * and their answers go through the envelope (spec 7.4). The attribution call does not: it carries no
 * session and no cookie, the proxy adds the visitor's address (`ip`) and user agent (`user_agent`,
 * replacing any the body held) and fills `utm_*` and `ga_client_id` from the tracking cookies when
 * the event has none; its answer is `{ ok: true }`, and a refusal by the provider (any non-2xx, 401
 * and 403 included, which are about the proxy's access to the provider, not about the visitor's
 * session) is 502 `attribution_rejected`.
 *
 * @module
 */
import { type Static, Type } from '@sinclair/typebox';
import { flatBody } from '../contracts/account.js';
import { envelope, type ProxyAnswer, upstreamAnswer } from '../envelope.js';
import { gaClientIdFromCookie, trackingFromCookie, UTM_KEYS } from '../session/attribution.js';
import { clientAddress } from '../session/client.js';
import { sessionUserId } from '../session/identity.js';
import { UpstreamError } from '../upstream/errors.js';
import { bff, external, ok, route, type RouteContext, type RouteSpec, routeTable } from './route.js';

const Id = Type.Union([Type.Integer({ minimum: 1 }), Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$' })]);
/** Body of the cashback routes. */
export const CashbackBody = Type.Object(
  { userId: Type.Optional(Id), depositId: Type.Optional(Id), transactionId: Type.Optional(Id) },
  { additionalProperties: false },
);

/**
 * A cashback call for the session user: the body with `userId` set to the session user's id (the
 * cached profile's `user.id`), so no client can ask about or pay out to another user; the profile's
 * own failure is answered instead (its 401/403 passes through, a profile without a usable id is 502
 * `upstream_bad_response`).
 */
function cashbackForSessionUser(): (ctx: RouteContext<Static<typeof CashbackBody>>) => Promise<ProxyAnswer> {
  return async (ctx) => {
    const target = ctx.request.routeOptions.config.upstream?.[0];
    if (!target) throw new Error(`route ${ctx.request.routeOptions.url} has no upstream`);
    const service = ctx.deps.services[target.service];
    // An unset function URL is answered as such (503 `not_configured`) before the profile is read.
    if (!service.configured) throw new UpstreamError('not_configured', { detail: `${service.name} is not set` });
    const user = await sessionUserId(ctx);
    if ('answer' in user) return user.answer;
    return upstreamAnswer(
      await ctx.call(target.service, { method: target.method, path: target.path, json: { ...ctx.body, userId: user.id } }),
    );
  };
}

const Short = Type.String({ minLength: 1, maxLength: 256 });
/**
 * A server-to-server attribution event (spec 6.3; spec 4.12 gives no shape). The known fields keep
 * their types and bounds: `event` names it (`sign_up`, `first_deposit`…); `timestamp` is epoch
 * milliseconds; `value` is in the currency's units; `properties` holds at most 30 flat values. Any
 * other field is one of the provider's own (`event_name`, `userId`, a click id of its kind…) and is
 * forwarded unchanged when it is a scalar: a flat body ({@link flatBody}: at most 64 fields, names
 * `^[A-Za-z][A-Za-z0-9_]{0,63}$`, strings of at most 2048 characters, no other nested object or
 * array), at most {@link ATTRIBUTION_BODY_LIMIT} bytes.
 */
export const AttributionEvent = flatBody({
  event: Type.String({ pattern: '^[A-Za-z][A-Za-z0-9_.-]{0,63}$' }),
  eventId: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9_.:-]{1,128}$' })),
  timestamp: Type.Optional(Type.Integer({ minimum: 0 })),
  value: Type.Optional(Type.Number({ minimum: 0 })),
  currency: Type.Optional(Type.String({ pattern: '^[A-Z]{3}$' })),
  clickId: Type.Optional(Short),
  utm_source: Type.Optional(Short),
  utm_medium: Type.Optional(Short),
  utm_campaign: Type.Optional(Short),
  utm_content: Type.Optional(Short),
  ga_client_id: Type.Optional(Type.String({ pattern: '^[0-9]{1,20}\\.[0-9]{1,20}$' })),
  properties: Type.Optional(
    Type.Record(
      Type.String({ pattern: '^[A-Za-z0-9_.-]{1,64}$' }),
      Type.Union([Type.String({ maxLength: 512 }), Type.Number(), Type.Boolean()]),
      {
        maxProperties: 30,
      },
    ),
  ),
});
export type AttributionEvent = Static<typeof AttributionEvent>;

/**
 * Largest attribution event, in bytes (32 KiB): a provider's event is a few hundred bytes; 64 fields
 * of ordinary length stay far below it.
 */
export const ATTRIBUTION_BODY_LIMIT = 32 * 1024;

/** Fields of the forwarded event that only the proxy sets (from the connection, not the body). */
const SERVER_ATTRIBUTION_FIELDS = ['ip', 'user_agent'] as const;

/** spec 4.10 External services, in the specification's order. */
export const externalRoutes: readonly RouteSpec[] = routeTable('External services', [
  route({
    method: 'POST',
    url: '/api/ftd-cashback/verify',
    spec: '4.10',
    summary: 'first-deposit cashback eligibility (external verifier function)',
    auth: 'required',
    evictsProfile: false,
    body: CashbackBody,
    bodyLimit: 16 * 1024,
    upstream: [external('ftdVerify', 'POST', ''), bff('GET', '/auth/user-profile')],
    handler: cashbackForSessionUser(),
  }),
  route({
    method: 'POST',
    url: '/api/ftd-cashback/send-cashback',
    spec: '4.10',
    summary: 'trigger the cashback payout (external function)',
    auth: 'required',
    body: CashbackBody,
    bodyLimit: 16 * 1024,
    upstream: [external('ftdSend', 'POST', ''), bff('GET', '/auth/user-profile')],
    handler: cashbackForSessionUser(),
  }),
  route({
    method: 'POST',
    url: '/api/tracking/attribution',
    spec: '4.10, 6.3',
    summary:
      "forward a server-to-server event to the attribution provider: its known fields checked, the provider's other scalar fields forwarded unchanged, the visitor's address and user agent added; answers { ok: true }",
    auth: 'none',
    body: AttributionEvent,
    bodyLimit: ATTRIBUTION_BODY_LIMIT,
    upstream: [external('attribution', 'POST', '')],
    handler: async (ctx) => {
      const event: Record<string, unknown> = { ...ctx.body };
      for (const field of SERVER_ATTRIBUTION_FIELDS) delete event[field];
      const tracking = trackingFromCookie(ctx.request.cookies.cookie_tracking);
      for (const key of UTM_KEYS) if (event[key] === undefined && tracking[key]) event[key] = tracking[key];
      event.ga_client_id ??= gaClientIdFromCookie(ctx.request.cookies._ga);
      if (event.ga_client_id === undefined) delete event.ga_client_id;
      event.timestamp ??= Date.now();
      event.ip = clientAddress(ctx.request);
      const ua = ctx.request.headers['user-agent'];
      if (ua) event.user_agent = ua.slice(0, 512);
      const res = await ctx.call('attribution', { method: 'POST', path: '', json: event }, { bearer: null });
      if (res.status >= 200 && res.status < 300) return ok({ ok: true });
      ctx.request.log.warn({ status: res.status }, 'attribution provider refused the event');
      return { status: 502, body: envelope('attribution_rejected', `The attribution provider answered ${res.status}`) };
    },
  }),
]);
