/**
 * The route table machinery: a route row declares its method, URL, auth need, schemas and upstream
 * (docs/architecture.md "Where to add"); {@link registerRoutes} turns rows into
 * Fastify routes. Routes never read the cookie, build URLs from raw input or format error bodies
 * themselves: the auth gate, the path builder and the envelope do.
 *
 * @module
 */
import type { ApiArea } from '../contracts/areas.js';
import type { Static, TSchema } from '@sinclair/typebox';
import type { FastifyContextConfig, FastifyInstance } from 'fastify';
import { envelope, type ProxyAnswer, upstreamAnswer } from '../envelope.js';
import type { ProxyErrorName } from '../proxy-errors.js';
import type { Config } from '../config.js';
import { sessionTokenKey } from '../session/cookie.js';
import type { HttpMethod } from '../upstream/client.js';
import { buildPath, type QueryValue } from '../upstream/paths.js';
import type { ServiceName } from '../upstream/services.js';
import { type AppDeps, RequestContext, type RouteContext, sendAnswer } from './context.js';

export type { AppDeps, RouteContext, ServiceName };

/**
 * Who may call a route (docs/behaviour.md "Which routes need a session"): `required` = the session cookie,
 * `none` = anyone (a present session is still forwarded), `operator` = the `CACHE_PURGE_TOKEN` bearer.
 */
export type AuthNeed = 'required' | 'none' | 'operator';

/** A declared upstream call of a route, for documentation and the coverage tests (spec part 4 "Upstream"). */
export interface UpstreamTarget {
  service: ServiceName;
  method: HttpMethod;
  /** Path template below the service's base URL, e.g. `/wallet/charge/{transactionId}`. */
  path: string;
}

/** Shorthand for a BFF upstream row: `bff('POST', '/bff/users/send-email')`. */
export function bff(method: HttpMethod, path: string): UpstreamTarget {
  return { service: 'bff', method, path };
}

/** Shorthand for a non-BFF upstream row: `external('sticker', 'POST', '/users/me/packs/open')`. */
export function external(service: ServiceName, method: HttpMethod, path: string): UpstreamTarget {
  return { service, method, path };
}

/** One row of a route table, with the area of its table ({@link routeTable}). */
export interface RouteSpec<B extends TSchema = TSchema, Q extends TSchema = TSchema, P extends TSchema = TSchema> {
  /** The area of the API the row belongs to (`contracts/areas.ts`): its table's, the tag of its OpenAPI operation. */
  area: ApiArea;
  method: HttpMethod | readonly HttpMethod[];
  /** The proxy route, e.g. `/api/validation/email/send` (Fastify syntax for parameters: `:slug`, `*`). */
  url: string;
  /** The specification section the row comes from, e.g. `4.2`. */
  spec: string;
  /** What the route does, in the specification's words (used in the API reference). */
  summary: string;
  auth: AuthNeed;
  /** Pre-authentication route (spec 5.5): form-level errors, never a passthrough 401 body (spec 7.4.4). */
  preAuth?: boolean;
  /** Only outside production (spec 1.6): not registered at all when `NODE_ENV=production`. */
  devOnly?: boolean;
  body?: B;
  querystring?: Q;
  params?: P;
  /** Accepted request body media types (default `application/json`); others answer 415. */
  contentTypes?: readonly string[];
  /** Request body limit in bytes (default 1 MiB). */
  bodyLimit?: number;
  /** `Cache-Control` of success answers (default `no-store`). */
  cacheControl?: string;
  /** The upstream calls this row makes, as the specification lists them. */
  upstream: readonly UpstreamTarget[];
  /**
   * The rate limit the route counts in (docs/behaviour.md "Rate limits and client address"); default
   * `preauth` for pre-authentication rows, `api` for every other `/api` row; `none` for no limit.
   */
  limit?: 'preauth' | 'beacon' | 'api' | 'none';
  /** Mutates the user: a success evicts the token's profile cache entry (default: every non-GET session route). */
  evictsProfile?: boolean;
  /**
   * A `GET` whose upstream call creates or hands out something (a game session, a sportsbook launch,
   * a partner or support-desk token, a KYC session): the CSRF defence refuses it cross-site like a
   * state-changing request (docs/behaviour.md "CSRF defence"). Default `false`.
   */
  sideEffects?: boolean;
  /**
   * The route takes an expired session token (refresh, logout, logout-auto; docs/behaviour.md "Which routes
   * need a session"): with `JWT_JWKS_URL` / `JWT_PUBLIC_KEY` only its signature is checked. Default `false`.
   */
  acceptsExpiredToken?: boolean;
  /**
   * The route answers success whatever the proxy refused before its handler (rate limit, body, media
   * type: then nothing is sent upstream): logout and logout-auto (spec 5.5; `pipeline/always-succeeds.ts`).
   * Default `false`.
   */
  alwaysSucceeds?: boolean;
  /**
   * The raw passthrough (`/api/core-sportbook/*`, docs/behaviour.md "The raw passthrough"): every answer
   * carries {@link PASSTHROUGH_ANSWER_HEADERS}, and the session's values are redacted in their base64
   * forms too. Default `false`.
   */
  rawPassthrough?: boolean;
  handler: (ctx: RouteContext<Static<B>, Static<Q>, Static<P>>) => Promise<ProxyAnswer | undefined>;
}

/** A row as a table writes it: a {@link RouteSpec} without the area, which its table gives. */
export type RouteRow<B extends TSchema = TSchema, Q extends TSchema = TSchema, P extends TSchema = TSchema> = Omit<
  RouteSpec<B, Q, P>,
  'area'
>;

/** A route table: its rows, each given the table's area, in the table's order. */
export function routeTable(area: ApiArea, rows: readonly RouteRow[]): readonly RouteSpec[] {
  return rows.map((row) => ({ ...row, area }));
}

/**
 * Declares a route row with its types inferred from its schemas.
 * @example
 * route({ method: 'POST', url: '/api/validation/email/send', spec: '4.2', summary: 'send e-mail verification code',
 *   auth: 'required', upstream: [bff('POST', '/bff/users/send-email')], handler: forward() })
 */
export function route<B extends TSchema = TSchema, Q extends TSchema = TSchema, P extends TSchema = TSchema>(
  spec: RouteRow<B, Q, P>,
): RouteRow {
  return spec as unknown as RouteRow;
}

/** How {@link forward} builds the upstream call from the validated input. */
export interface ForwardOptions<B, Q, P> {
  /** The target; default: the route's single `upstream` row. */
  target?: UpstreamTarget;
  /** Values for the path template's `{name}` segments; default: the route's params. */
  pathValues?: (ctx: RouteContext<B, Q, P>) => Record<string, unknown>;
  /** The upstream query; default: none. */
  query?: (ctx: RouteContext<B, Q, P>) => Readonly<Record<string, QueryValue>> | undefined;
  /** The upstream JSON body; default: the validated request body for methods with a body. */
  body?: (ctx: RouteContext<B, Q, P>) => unknown;
}

const BODYLESS = new Set<HttpMethod>(['GET', 'HEAD', 'DELETE']);

/**
 * The handler of a pure data row: one upstream call built from the row, answered through the
 * envelope (spec 7.4). The path's `{name}` segments are filled with {@link buildPath} (unsafe input is
 * a 400 before any call).
 */
export function forward<B = unknown, Q = unknown, P = unknown>(
  options: ForwardOptions<B, Q, P> = {},
): (ctx: RouteContext<B, Q, P>) => Promise<ProxyAnswer> {
  const handler = async (ctx: RouteContext<B, Q, P>): Promise<ProxyAnswer> => {
    const config = ctx.routeConfig ?? ctx.request.routeOptions.config;
    const target = options.target ?? config.upstream?.[0];
    if (!target) throw new Error(`route ${ctx.request.routeOptions.url} has no upstream`);
    const values = options.pathValues ? options.pathValues(ctx) : ((ctx.params ?? {}) as Record<string, unknown>);
    const path = buildPath(target.path, values);
    const json = options.body ? options.body(ctx) : BODYLESS.has(target.method) ? undefined : (ctx.body ?? {});
    const res = await ctx.call(target.service, {
      method: target.method,
      path,
      query: options.query?.(ctx),
      json,
    });
    return upstreamAnswer(res, { preAuth: config.preAuth === true, unchecked: ctx.deps.omitted?.answerJsonCheck === true });
  };
  FORWARDS.set(handler, { target: options.target });
  return handler;
}

/** The handlers {@link forward} made, with the target it was given (`undefined`: the row's single upstream row). */
const FORWARDS = new WeakMap<object, { target: UpstreamTarget | undefined }>();

/**
 * The upstream call a row's handler makes before anything else, when that is all it does and its
 * endpoint is known before the request: a {@link forward} handler whose target's path has no
 * parameters. `undefined` for any other row.
 */
function forwardTargetOf(r: RouteSpec): UpstreamTarget | undefined {
  const forwarded = FORWARDS.get(r.handler);
  if (forwarded === undefined) return undefined;
  const target = forwarded.target ?? r.upstream[0];
  return target === undefined || target.path.includes('{') ? undefined : target;
}

/** An answer that is a proxy-made envelope (validation failures the schemas cannot express, etc.). */
export function fail(status: number, error: ProxyErrorName, detail: string, extra?: Record<string, unknown>): ProxyAnswer {
  return { status, body: envelope(error, detail, extra) };
}

/** A JSON success answer made by the proxy. */
export function ok(body: object, status = 200): ProxyAnswer {
  return { status, body };
}

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: AuthNeed;
    preAuth?: boolean;
    contentTypes?: readonly string[];
    upstream?: readonly UpstreamTarget[];
    spec?: string;
    /** The area of the route's table ({@link RouteSpec.area}; the OpenAPI document's tag). */
    area?: ApiArea;
    cacheControl?: string;
    evictsProfile?: boolean;
    /** A `GET` with upstream side effects, refused cross-site by the CSRF defence ({@link RouteSpec.sideEffects}). */
    sideEffects?: boolean;
    /** Only outside production (the OpenAPI document tags it `Development`). */
    devOnly?: boolean;
    /** The rate limit the route counts in (read by the rate-limit pipeline step). */
    limit?: 'preauth' | 'beacon' | 'api';
    /** The route takes an expired session token ({@link RouteSpec.acceptsExpiredToken}; read by the auth gate). */
    acceptsExpiredToken?: boolean;
    /** The raw passthrough ({@link RouteSpec.rawPassthrough}). */
    rawPassthrough?: boolean;
    /**
     * The row's handler is {@link forward} to this call, whose path has no parameters: its endpoint's
     * guard can refuse the request right before the handler (`pipeline/errors.ts`), as the call would be.
     */
    forwardsTo?: UpstreamTarget | undefined;
  }
}

/**
 * Headers of every answer of the raw passthrough, errors included (docs/behaviour.md "The raw
 * passthrough"): whatever the upstream sent cannot run on the site's origin — no script, no plugin, no
 * form, a unique origin — nor be sniffed into a type that would.
 */
export const PASSTHROUGH_ANSWER_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': "sandbox; default-src 'none'",
  'x-content-type-options': 'nosniff',
};

/** The routes of the tables that exist in this environment (dev-only rows dropped in production). */
export function activeRoutes(tables: readonly (readonly RouteSpec[])[], config: Config): RouteSpec[] {
  return tables.flat().filter((r) => !(r.devOnly && config.production));
}

/** The rate limit of a row (see {@link RouteSpec.limit}). */
function limitOf(r: RouteSpec): FastifyContextConfig['limit'] {
  const limit = r.limit ?? (r.preAuth ? 'preauth' : r.url.startsWith('/api/') ? 'api' : 'none');
  return limit === 'none' ? undefined : limit;
}

/**
 * Registers route rows on a Fastify instance: each row becomes a route whose `config` carries its
 * declarations (read by the pipeline's gates) and whose handler gets a {@link RouteContext}; a
 * successful mutation evicts the session's profile entry; the answer is sent by `sendAnswer`.
 */
export function registerRoutes(app: FastifyInstance, routes: readonly RouteSpec[], deps: AppDeps): void {
  for (const r of routes) {
    const methods = (Array.isArray(r.method) ? r.method : [r.method]) as HttpMethod[];
    const evicts = r.evictsProfile ?? (r.auth === 'required' && methods.some((m) => m !== 'GET'));
    const config: FastifyContextConfig = {
      auth: r.auth,
      preAuth: r.preAuth === true,
      contentTypes: r.contentTypes ?? ['application/json'],
      upstream: r.upstream,
      spec: r.spec,
      area: r.area,
      cacheControl: r.cacheControl,
      evictsProfile: evicts,
      sideEffects: r.sideEffects === true,
      devOnly: r.devOnly === true,
      limit: limitOf(r),
      acceptsExpiredToken: r.acceptsExpiredToken === true,
      alwaysSucceeds: r.alwaysSucceeds === true,
      rawPassthrough: r.rawPassthrough === true,
      forwardsTo: forwardTargetOf(r),
    };
    app.route({
      method: methods,
      url: r.url,
      bodyLimit: r.bodyLimit,
      schema: {
        // Documentation only (Fastify ignores these keys); response schemas are never set here, since
        // Fastify would serialise answers with them: the OpenAPI step documents the answers.
        summary: r.summary,
        ...(r.auth === 'required' ? { security: [{ sessionCookie: [] }] } : {}),
        ...(r.auth === 'operator' ? { security: [{ operatorBearer: [] }] } : {}),
        ...(r.body ? { body: r.body } : {}),
        ...(r.querystring ? { querystring: r.querystring } : {}),
        ...(r.params ? { params: r.params } : {}),
      },
      config,
      ...(r.rawPassthrough === true && {
        onSend: (_request, reply, payload, done) => {
          reply.headers(PASSTHROUGH_ANSWER_HEADERS);
          done(null, payload);
        },
      }),
      handler: async (request, reply) => {
        const ctx = new RequestContext(request, reply, config, deps);
        const answer = await r.handler(ctx as never);
        if (evicts && ctx.token && reply.statusCode < 400 && (!answer || answer.status < 400)) {
          deps.profileCache.evict(ctx.token);
        }
        // The BFF refused this session's token: its live streams end on every instance (docs/behaviour.md "Live streams").
        // (Not a pre-authentication route's 401: a wrong password says nothing of the session cookie beside it.)
        // Its cached profile goes too, on every instance: a refused token reads as refused, not from the cache.
        if (answer?.status === 401 && ctx.token && r.preAuth !== true) {
          deps.profileCache.evict(ctx.token);
          deps.state.fleet.announceSessionEnd(sessionTokenKey(ctx.request, ctx.token), 'refused');
        }
        if (answer) return sendAnswer(reply, answer, ctx);
        return reply;
      },
    });
  }
}
