/**
 * Pipeline step **OpenAPI** (docs/behaviour.md "Operations", "Development-only routes"): registered
 * before the route tables, so that it sees every route. `@fastify/swagger` builds the document from
 * the routes as they are registered (the route tables are its only source) for `GET /openapi.json`,
 * and `GET /docs` is Swagger UI served from the npm package, so the page loads nothing from another
 * host.
 *
 * What `@fastify/swagger` gives (parameters and request bodies from the routes' TypeBox schemas) is
 * completed by {@link completeDocument}: per operation a stable camelCase `operationId`
 * (`postPaymentsDeposit`), its area tag, a description citing its specification section, its
 * session need, whether its body is required, the `Idempotency-Key` header of the money moves, its
 * success answer (`contracts/answers.ts`) and the error answers it can give, each with the
 * `X-Error-Ref` header; the catalogue reads answered from the shared cache (`catalogueCache` in
 * `contracts/answers.ts`) also get their HTTP caching: `ETag`, `Vary`, `Content-Encoding`,
 * `Cache-Control` on the success, `If-None-Match` and a `304` on a `GET`. Response schemas live only in the document: they are never route response
 * schemas, which Fastify would use to serialise answers (passthrough bodies must stay byte for byte).
 *
 * @module
 */
import swagger from '@fastify/swagger';
import type { FastifyInstance, RouteOptions } from 'fastify';
import fp from 'fastify-plugin';
import type { TSchema } from '@sinclair/typebox';
import { CATALOGUE_CACHE_CONTROL } from '../catalogue/representation.js';
import type { Config } from '../config.js';
import { ANSWER_COMPONENTS, MONEY_MOVES, REQUEST_EXAMPLES, ROUTE_ANSWERS, type SuccessDoc } from '../contracts/answers.js';
import { API_AREAS, type ApiArea } from '../contracts/areas.js';
import { MAX_AMOUNT_CENTS } from '../contracts/payments.js';
import { JSON_BODY_LIMIT } from './body.js';
import { STATE_CHANGING } from './csrf.js';

/** Options of the {@link openapi} plugin. */
export interface OpenApiOptions {
  config: Pick<Config, 'buildId' | 'sessionCookieName' | 'production'>;
}

/** The areas of the document, in the specification's order (`contracts/areas.ts`): its tags. */
export const OPENAPI_TAGS = API_AREAS;

/**
 * The tag of an operation: `Development` for a development-only route, else the area its route table
 * names (`area` of its Fastify config); none for a route of no area, which the document's test refuses.
 */
function tagsOf(facts: RouteFacts | undefined): string[] {
  if (facts?.devOnly) return ['Development'];
  return facts?.area === undefined ? [] : [facts.area];
}

/** A route path in OpenAPI form: `:name` → `{name}`, a final `*` → `{subPath}`. */
export function documentPath(url: string): string {
  return url.replace(/:([A-Za-z0-9_]+)/g, '{$1}').replace(/\*$/, '{subPath}');
}

/**
 * The `operationId` of an operation: its method, then the path's words in camel case (`/api/` left
 * out, `{name}` as `ByName`), e.g. `POST /api/payments/deposit` → `postPaymentsDeposit`.
 */
export function operationIdOf(method: string, path: string): string {
  const words = path
    .replace(/^\/api\//, '/')
    .split('/')
    .filter(Boolean)
    .flatMap((segment) => {
      const param = /^\{(.+)\}$/.exec(segment);
      return param ? ['by', ...(param[1] as string).split(/(?=[A-Z])|[-_.]/)] : segment.split(/[-_.]/);
    })
    .filter(Boolean);
  const camel = words.map((w) => w.charAt(0).toUpperCase() + w.slice(1).toLowerCase()).join('');
  return `${method.toLowerCase()}${camel}`;
}

/** What the document needs to know of a route, taken from its Fastify options when it is registered. */
interface RouteFacts {
  /** The route's URL as the tables write it (`/api/games/category/:slug`). */
  readonly url: string;
  readonly auth: 'required' | 'none' | 'operator';
  readonly preAuth: boolean;
  readonly devOnly: boolean;
  /** The area of the route's table (`contracts/areas.ts`); `undefined` for a route of none. */
  readonly area: ApiArea | undefined;
  readonly spec: string | undefined;
  readonly summary: string | undefined;
  readonly upstream: readonly { service: string; method: string; path: string }[];
  readonly contentTypes: readonly string[];
  readonly bodyLimit: number;
  readonly cacheControl: string | undefined;
  readonly hasInput: boolean;
}

type Json = Record<string, unknown>;

const ENVELOPE = { $ref: '#/components/schemas/Envelope' };
const NO_TOKEN = { $ref: '#/components/schemas/NoToken' };
const PASSTHROUGH = { $ref: '#/components/schemas/UpstreamBody' };
const ERROR_REF_HEADER = { 'X-Error-Ref': { $ref: '#/components/headers/X-Error-Ref' } };
const RETRY_AFTER_HEADER = { 'Retry-After': { $ref: '#/components/headers/Retry-After' } };

/** The components every operation refers to (schemas, headers, security schemes). */
function components(cookieName: string): Json {
  const names = new Map(Object.entries(ANSWER_COMPONENTS).map(([name, schema]) => [schema as object, name]));
  const answerSchemas = Object.fromEntries(
    Object.entries(ANSWER_COMPONENTS).map(([name, schema]) => [name, plainSchema(schema, names, schema)]),
  );
  return {
    schemas: {
      Envelope: {
        type: 'object',
        description:
          'The error envelope of the proxy (spec 7.4): `error` is a stable snake_case name, `detail` a message for people. A route may add fields on statuses other than 401 and 403 (spec 7.4.2): a deposit adds `limitError`; a deposit or withdrawal whose amount is out of range adds `minimumCents` or `maximumCents`.',
        required: ['ok', 'error', 'detail'],
        properties: {
          ok: { const: false },
          error: { type: 'string', pattern: '^[a-z][a-z0-9_]*$', examples: ['invalid_request'] },
          detail: { type: 'string', examples: ['body.creditAmount must be >= 1'] },
          minimumCents: {
            type: 'integer',
            minimum: 0,
            description:
              'integer cents: the smallest amount accepted, on `amount_below_minimum` (the bound the upstream gave) and on a 400 `invalid_request` for an amount under the proxy range (1)',
            examples: [1000],
          },
          maximumCents: {
            type: 'integer',
            minimum: 0,
            description: `integer cents: the largest amount accepted, on \`amount_above_maximum\` (the bound the upstream gave) and on a 400 \`invalid_request\` for an amount over the proxy range (${MAX_AMOUNT_CENTS})`,
            examples: [5000000],
          },
          limitError: {
            type: 'object',
            description:
              'a deposit refused for a responsible-gaming limit: `{ reason, limit?, remaining?, period? }`; `limit` and `remaining` as the upstream sends them (integer cents)',
          },
        },
        additionalProperties: true,
      },
      NoToken: {
        type: 'object',
        description:
          'The answer of a session route without a usable session (spec 5.2, 7.4.3; docs/behaviour.md "Which routes need a session"); nothing is sent upstream. `no_token`: no cookie (EM0001); `invalid_token`: not a well-formed JWT, or (with the BFF\'s keys) a failed signature (EM0002); `token_expired`: expired, with the BFF\'s keys (EM0003).',
        required: ['reason'],
        properties: { reason: { enum: ['no_token', 'invalid_token', 'token_expired'] } },
        additionalProperties: false,
      },
      UpstreamBody: {
        description:
          "The upstream's 401 or 403 body, passed through byte for byte with its media type (spec 7.4.1), so that its reason survives for the EM classification. Its shape is the upstream's.",
      },
      ...answerSchemas,
    },
    headers: {
      'X-Error-Ref': {
        description:
          'The error reference `EPdddd-EMdddd` of this answer (spec 7.1): the same one the browser SDK computes; the log line of the request carries it as `ref`.',
        required: true,
        schema: { type: 'string', pattern: '^EP[0-9]{4}-EM[0-9]{4}$', examples: ['EP0711-EM0021'] },
      },
      'Retry-After': {
        description: 'Seconds to wait before trying again.',
        required: true,
        schema: { type: 'integer', minimum: 0 },
      },
    },
    securitySchemes: {
      sessionCookie: {
        type: 'apiKey',
        in: 'cookie',
        name: cookieName,
        description: `The HttpOnly session cookie \`${cookieName}\` holding the JWT, set by login, registration, social login and refresh, cleared by logout. Scripts never see it.`,
      },
      operatorBearer: { type: 'http', scheme: 'bearer', description: 'The operator credential `CACHE_PURGE_TOKEN`, not a user session.' },
    },
  };
}

/**
 * A TypeBox schema as plain JSON Schema (symbols dropped); a sub-schema that is one of the named
 * answer shapes becomes a `$ref` to its component.
 */
function plainSchema(schema: unknown, names: ReadonlyMap<object, string>, self?: object): unknown {
  if (Array.isArray(schema)) return schema.map((s) => plainSchema(s, names));
  if (!schema || typeof schema !== 'object') return schema;
  const name = schema !== self ? names.get(schema) : undefined;
  if (name) return { $ref: `#/components/schemas/${name}` };
  const out: Json = {};
  for (const [key, value] of Object.entries(schema)) out[key] = plainSchema(value, names);
  return out;
}

const ANSWER_NAMES = new Map(Object.entries(ANSWER_COMPONENTS).map(([name, schema]) => [schema as object, name]));

function documented(schema: TSchema): unknown {
  return plainSchema(schema, ANSWER_NAMES);
}

function bullet(items: readonly string[]): string {
  return items.map((item) => `- ${item}`).join('\n');
}

function errorAnswer(description: string, schema: unknown, headers: Json = {}): Json {
  return { description, headers: { ...ERROR_REF_HEADER, ...headers }, content: { 'application/json': { schema } } };
}

function bytes(n: number): string {
  return n % (1024 * 1024) === 0 ? `${n / (1024 * 1024)} MiB` : `${Math.round(n / 1024)} KiB`;
}

/** Headers of the catalogue answers served from the shared cache (spec 4.6 "cacheable"; `catalogue/representation.ts`). */
const CATALOGUE_CACHE_HEADERS: Json = {
  'Cache-Control': {
    description: `\`${CATALOGUE_CACHE_CONTROL}\` when answered from the shared catalogue cache; \`no-store\` when forwarded with a session (\`CATALOGUE_FOR_SESSIONS=forward\`).`,
    schema: { type: 'string' },
  },
  ETag: {
    description:
      'A strong entity tag of the answer\'s bytes (`"<digest>"`; the `gzip` and `br` variants have `"<digest>-gzip"` and `"<digest>-br"`); absent when forwarded with a session. It changes when the cached catalogue changes.',
    schema: { type: 'string', pattern: '^"[A-Za-z0-9_-]+"$' },
  },
  Vary: {
    description:
      '`Accept-Encoding`; `Cookie, Accept-Encoding` with `CATALOGUE_FOR_SESSIONS=forward`. Absent when forwarded with a session.',
    schema: { type: 'string' },
  },
  'Content-Encoding': {
    description:
      '`br` or `gzip`, as `Accept-Encoding` prefers (q-values; `br` first at equal q), for bodies of 1 KiB and more; absent for the identity body. Never for an answer forwarded with a session.',
    schema: { enum: ['br', 'gzip'] },
  },
};

/** The `If-None-Match` request header of a catalogue `GET` (RFC 9110 §13.1.2). */
const IF_NONE_MATCH = {
  name: 'If-None-Match',
  in: 'header',
  required: false,
  description:
    'Entity tags of a stored answer (`W/` prefixes and lists accepted, or `*`): when one is the tag of any variant of the cached answer, the answer is 304 without a body.',
  schema: { type: 'string' },
};

/** The 304 of a catalogue `GET` answered from the shared cache. */
const NOT_MODIFIED: Json = {
  description:
    'Not modified: `If-None-Match` names the cached answer. No body; the `ETag` of the variant `Accept-Encoding` would have chosen.',
  headers: {
    ETag: CATALOGUE_CACHE_HEADERS.ETag,
    'Cache-Control': { description: `\`${CATALOGUE_CACHE_CONTROL}\``, schema: { type: 'string' } },
    Vary: CATALOGUE_CACHE_HEADERS.Vary,
  },
};

/**
 * The success answers of an operation, by status: one, or 201 and 200 with the same body when the
 * upstream's status is passed through and it creates a record (`SuccessDoc.created`).
 */
function successAnswers(facts: RouteFacts | undefined, doc: SuccessDoc | undefined, moneyMove: boolean): Json {
  const [status, answer] = successAnswer(facts, doc, moneyMove);
  if (doc?.created !== true) return { [status]: answer };
  const both = {
    ...answer,
    description: `${String(answer.description)}\n\nThe status is the upstream's (spec 4.12): 201 when it created the record, 200 otherwise.`,
  };
  return { [status]: both, '201': both };
}

/** The success answer of an operation. */
function successAnswer(facts: RouteFacts | undefined, doc: SuccessDoc | undefined, moneyMove: boolean): [string, Json] {
  const status = String(doc?.status ?? 200);
  const headers: Json = {};
  if (doc?.session === 'establish') {
    headers['Set-Cookie'] = {
      description:
        'The session cookie (HttpOnly, SameSite=Lax, Secure in production) with the new JWT; absent when a login answers a `type`.',
      schema: { type: 'string' },
    };
  }
  if (doc?.session === 'end')
    headers['Set-Cookie'] = { description: 'The session cookie cleared (`Max-Age=0`).', schema: { type: 'string' } };
  if (moneyMove) {
    headers['Idempotent-Replayed'] = {
      description: '`true` when this is the stored answer of an earlier submission with the same key, replayed.',
      schema: { const: 'true' },
    };
  }
  if (facts?.cacheControl) headers['Cache-Control'] = { description: `\`${facts.cacheControl}\``, schema: { type: 'string' } };
  if (doc?.catalogueCache) Object.assign(headers, CATALOGUE_CACHE_HEADERS);
  const answer: Json = { description: doc?.description ?? (status === '204' ? 'No content.' : 'Success.') };
  if (Object.keys(headers).length > 0) answer.headers = headers;
  if (doc?.content) {
    answer.content = Object.fromEntries(Object.entries(doc.content).map(([type, schema]) => [type, { schema: documented(schema) }]));
  } else if (doc?.schema !== null) {
    const fallback = {
      type: 'object',
      additionalProperties: true,
      description:
        facts && facts.upstream.length > 0
          ? "The upstream's answer as it sent it (its status and body); the specification does not show its fields (spec 4.12)."
          : 'Answered by the proxy; the specification does not show its fields.',
    };
    answer.content = { 'application/json': { schema: doc?.schema ? documented(doc.schema) : fallback } };
  }
  return [status, answer];
}

/** The error answers an operation can give (docs/behaviour.md "Error envelope"). */
function errorAnswers(
  method: string,
  path: string,
  facts: RouteFacts | undefined,
  doc: SuccessDoc | undefined,
  moneyMove: boolean,
  share: (name: string, answer: Json) => Json,
): Json {
  const out: Json = {};
  const api = path.startsWith('/api/');
  const upstream = (facts?.upstream.length ?? 0) > 0 && doc?.alwaysSucceeds !== true;
  const stateChanging = STATE_CHANGING.has(method.toUpperCase());
  const preAuth = facts?.preAuth === true;
  const hasInput = facts?.hasInput === true || doc?.requestBody !== undefined;
  const auth = facts?.auth ?? 'none';

  if (hasInput || upstream) {
    const why = [
      ...(hasInput
        ? [
            preAuth
              ? '`invalid_request`: the form is invalid; nothing is sent upstream'
              : '`invalid_request`: the body, query or path is invalid (or a path segment is unsafe); nothing is sent upstream',
          ]
        : []),
      ...(upstream ? ['the upstream answered 400 (envelope)'] : []),
    ];
    const name =
      hasInput && upstream
        ? preAuth
          ? 'InvalidFormOrUpstream'
          : 'InvalidRequestOrUpstream'
        : hasInput
          ? preAuth
            ? 'InvalidForm'
            : 'InvalidRequest'
          : 'UpstreamBadRequest';
    out['400'] = share(name, errorAnswer(bullet(why), ENVELOPE));
  }
  if (auth === 'required') {
    out['401'] = share(
      upstream ? 'NoSessionOrUpstreamUnauthorized' : 'NoSession',
      errorAnswer(
        bullet([
          '`{ "reason": "no_token" }`: the session cookie is absent; `invalid_token`: it is not a well-formed JWT or its signature fails; `token_expired`: it has expired (with the BFF\'s keys); nothing is sent upstream',
          ...(upstream ? ["the upstream's 401 body, byte for byte (the session ended: the browser SDK classifies it and logs out)"] : []),
        ]),
        upstream ? { anyOf: [NO_TOKEN, PASSTHROUGH] } : NO_TOKEN,
      ),
    );
  } else if (auth === 'operator') {
    out['401'] = share(
      'OperatorCredentialRequired',
      errorAnswer('`operator_credential_required`: no valid `Authorization: Bearer <CACHE_PURGE_TOKEN>`.', ENVELOPE),
    );
  } else if (preAuth && upstream) {
    out['401'] = share(
      'InvalidCredentials',
      errorAnswer(
        'A form-level error (`invalid_credentials`), never the upstream body: a pre-authentication route never ends a session (spec 7.4.4).',
        ENVELOPE,
      ),
    );
  } else if (upstream) {
    out['401'] = share(
      'UpstreamUnauthorized',
      errorAnswer("The upstream's 401 body, byte for byte (a session present is forwarded).", PASSTHROUGH),
    );
  }
  const forbidden: string[] = [];
  if (stateChanging)
    forbidden.push(
      '`csrf_rejected`: a cross-site request (`Sec-Fetch-Site: cross-site`) or an `Origin` not allowed; nothing is sent upstream',
    );
  const deposit = doc !== undefined && doc === ROUTE_ANSWERS['POST /api/payments/deposit'];
  if (deposit) forbidden.push("`user_mismatch`: `userId` is not the session's own user; nothing is sent upstream");
  if (upstream)
    forbidden.push(preAuth ? 'a form-level error (`access_denied`) for an upstream 403' : "the upstream's 403 body, byte for byte");
  if (forbidden.length > 0) {
    const passthrough = upstream && !preAuth;
    const only = passthrough && forbidden.length === 1;
    const name = deposit
      ? 'DepositForbidden'
      : !stateChanging
        ? 'UpstreamForbidden'
        : !upstream
          ? 'CsrfRejected'
          : preAuth
            ? 'CsrfRejectedOrAccessDenied'
            : 'CsrfRejectedOrUpstreamForbidden';
    out['403'] = share(
      name,
      errorAnswer(bullet(forbidden), only ? PASSTHROUGH : passthrough ? { anyOf: [ENVELOPE, PASSTHROUGH] } : ENVELOPE),
    );
  }
  if (moneyMove) {
    out['409'] = share(
      'RequestInProgress',
      errorAnswer(
        '`request_in_progress`: the same submission (same `Idempotency-Key`, or without one the same session and body within 5 s) is still in flight, or its outcome is unknown until its lease ends; it never reaches the upstream twice.',
        ENVELOPE,
        RETRY_AFTER_HEADER,
      ),
    );
    out['422'] = share(
      'IdempotencyKeyReusedOrAmountRefused',
      errorAnswer(
        bullet([
          '`idempotency_key_reused`: this `Idempotency-Key` was used with another body',
          'the upstream refused the amount: `amount_below_minimum` with `minimumCents`, `amount_above_maximum` with `maximumCents` (integer cents, when the upstream gave the bound)',
        ]),
        ENVELOPE,
      ),
    );
  }
  // A route that always succeeds (logout, spec 5.5) answers its success where the proxy refuses a body,
  // a media type or a rate limit (`pipeline/always-succeeds.ts`).
  const refusable = doc?.alwaysSucceeds !== true;
  if (stateChanging && refusable) {
    const limit = facts?.bodyLimit ?? JSON_BODY_LIMIT;
    out['413'] = share(
      `PayloadTooLarge${bytes(limit).replace(' ', '')}`,
      errorAnswer(`\`payload_too_large\`: the body is over ${bytes(limit)}.`, ENVELOPE),
    );
    const types = facts?.contentTypes ?? ['application/json'];
    const name = `UnsupportedMediaType${types.includes('application/json') ? '' : 'ForUpload'}`;
    out['415'] = share(
      name,
      errorAnswer(
        `\`unsupported_media_type\`: a body that is not ${types.map((t) => `\`${t}\``).join(' or ')}; nothing is sent upstream.`,
        ENVELOPE,
      ),
    );
  }
  if (api && refusable) {
    out['429'] = share(
      'RateLimited',
      errorAnswer(
        '`rate_limited`: a request limit of the proxy (`RATE_LIMIT_*`); nothing is sent upstream. `Retry-After` says when to try again.',
        ENVELOPE,
        RETRY_AFTER_HEADER,
      ),
    );
  }
  if (upstream) {
    out['502'] = share(
      'BadGateway',
      errorAnswer(
        bullet([
          '`upstream_unavailable`: the upstream refused or reset the connection',
          '`upstream_bad_response`: the upstream sent something that is not a valid answer',
          '`upstream_redirect`: the upstream answered a redirect (never followed)',
          '`upstream_response_too_large`: the upstream answer is over 4 MiB',
          'the upstream answered 502',
        ]),
        ENVELOPE,
      ),
    );
  }
  const unavailable = ['`shutting_down`: the process is stopping (with `Connection: close`)'];
  let unavailableName = 'Unavailable';
  const services = new Set((facts?.upstream ?? []).map((u) => u.service));
  if ([...services].some((s) => s !== 'bff') || auth === 'operator') {
    unavailable.push('`not_configured`: a variable the route needs is not set (`detail` names it)');
    unavailableName += 'NotConfigured';
  }
  if (moneyMove) {
    unavailable.push(
      '`idempotency_unavailable` (with `Retry-After`): the shared state (Redis) cannot be reached, or a replica that could be promoted did not acknowledge the record in time; nothing is sent upstream',
    );
    unavailableName += 'Idempotency';
  }
  if (path === '/readyz') {
    unavailable.push('`not_ready`: the BFF cannot be reached');
    unavailableName += 'NotReady';
  }
  if (upstream) {
    unavailable.push('the upstream answered 503');
    unavailableName += 'Upstream';
  }
  out['503'] = share(unavailableName, errorAnswer(bullet(unavailable), ENVELOPE));
  if (upstream) {
    out['504'] = share(
      'GatewayTimeout',
      errorAnswer('`upstream_timeout`: the upstream did not answer within `UPSTREAM_TIMEOUT_MS`.', ENVELOPE),
    );
    out.default = share(
      'UpstreamFailure',
      errorAnswer(
        'Any other failure status of the upstream, with the envelope (`error` from its reason, or named after its status); 500 `upstream_error` when the status is unknown, 500 `internal_error` for a fault of the proxy.',
        ENVELOPE,
      ),
    );
  }
  return out;
}

function sessionText(facts: RouteFacts | undefined, cookie: string): string {
  if (!facts || facts.auth === 'none')
    return facts?.preAuth
      ? 'none (pre-authentication route: form-level errors, never a forced logout)'
      : 'none (a session present is forwarded)';
  if (facts.auth === 'operator') return 'the operator credential (`Authorization: Bearer <CACHE_PURGE_TOKEN>`), not a user session';
  return `required: the \`${cookie}\` cookie`;
}

function upstreamText(facts: RouteFacts | undefined): string {
  if (!facts || facts.upstream.length === 0) return 'none (answered by the proxy)';
  return facts.upstream.map((u) => `\`${u.method} ${u.service === 'bff' ? '' : `{${u.service}}`}${u.path}\``).join(', ');
}

function description(facts: RouteFacts | undefined, moneyMove: boolean, cookie: string): string {
  const parts: string[] = [];
  if (facts?.summary) parts.push(`${facts.summary.charAt(0).toUpperCase()}${facts.summary.slice(1)}.`);
  const lines = [
    facts?.spec ? `**Specification:** section ${facts.spec}.` : '**Specification:** none (an operations route of the proxy).',
    `**Session:** ${sessionText(facts, cookie)}.`,
    `**Upstream:** ${upstreamText(facts)}.`,
  ];
  if (facts?.devOnly) lines.push('**Development only:** absent in production (404).');
  parts.push(lines.join('  \n'));
  if (moneyMove) {
    parts.push(
      'A **money move**: it reaches the upstream once per submission. Send a fresh `Idempotency-Key` per user action; a repeat replays the stored answer with `Idempotent-Replayed: true` (24 h with a key; 5 s for the same session and body without one), answers 409 while the first is in flight, and 422 when the key comes with another body.',
    );
  }
  return parts.join('\n\n');
}

function acceptsNoBody(schema: unknown): { optional: boolean; schema: unknown } {
  const s = schema as { anyOf?: unknown[] } | undefined;
  if (s && Array.isArray(s.anyOf)) {
    const rest = s.anyOf.filter((m) => (m as { type?: unknown }).type !== 'null');
    if (rest.length < s.anyOf.length) return { optional: true, schema: rest.length === 1 ? rest[0] : { ...s, anyOf: rest } };
  }
  return { optional: false, schema };
}

const HTTP_METHODS = new Set(['get', 'put', 'post', 'delete', 'patch', 'options', 'head', 'trace']);

const IDEMPOTENCY_KEY = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    'A key of this user action (1-255 visible ASCII characters; the browser SDK sends a fresh one per action). Forwarded upstream. Without it, the same session and body within 5 s count as one submission.',
  schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7e]+$' },
};

/**
 * Completes the document `@fastify/swagger` built (see the module documentation): every operation
 * gets its `operationId`, tag, description, body requirement, money-move header, success and error
 * answers; the shared components and the tags are added.
 *
 * @param document - the OpenAPI object; changed in place and returned.
 * @param facts - the routes' facts by `'<METHOD> <document path>'`.
 */
export function completeDocument(document: Json, facts: ReadonlyMap<string, RouteFacts>, cookieName: string): Json {
  const paths = (document.paths ?? {}) as Record<string, Json>;
  const responses: Record<string, Json> = {};
  const share = (name: string, answer: Json): Json => {
    const known = responses[name];
    if (known && JSON.stringify(known) !== JSON.stringify(answer)) throw new Error(`two different error answers named ${name}`);
    responses[name] = answer;
    return { $ref: `#/components/responses/${name}` };
  };
  for (const [path, item] of Object.entries(paths)) {
    for (const method of Object.keys(item)) {
      if (!HTTP_METHODS.has(method)) continue;
      // A route with several methods shares one operation object: each method gets its own copy.
      const op = structuredClone(item[method]) as Json;
      const upper = method.toUpperCase();
      const f = facts.get(`${upper} ${path}`);
      const key = `${upper} ${f?.url ?? path}`;
      const doc = ROUTE_ANSWERS[key];
      const moneyMove = MONEY_MOVES.includes(key);
      op.operationId = operationIdOf(method, path);
      op.tags = tagsOf(f);
      op.description = description(f, moneyMove, cookieName);
      if (f?.auth === 'required') op.security = [{ sessionCookie: [] }];
      else if (f?.auth === 'operator') op.security = [{ operatorBearer: [] }];
      else delete op.security;
      if (moneyMove) op.parameters = [...((op.parameters as unknown[] | undefined) ?? []), IDEMPOTENCY_KEY];
      const conditional = doc?.catalogueCache === true && upper === 'GET';
      if (conditional) op.parameters = [...((op.parameters as unknown[] | undefined) ?? []), IF_NONE_MATCH];
      const body = op.requestBody as { content?: Record<string, { schema?: unknown }> } | undefined;
      if (body?.content) {
        let optional = false;
        for (const media of Object.values(body.content)) {
          const checked = acceptsNoBody(media.schema);
          optional ||= checked.optional;
          media.schema = checked.schema;
        }
        (body as Json).required = !optional;
        const json = body.content['application/json'] as Json | undefined;
        if (json && REQUEST_EXAMPLES[key] !== undefined) json.example = REQUEST_EXAMPLES[key];
        if (optional) (body as Json).description = 'Optional: the request may have no body.';
      } else if (doc?.requestBody && STATE_CHANGING.has(upper)) {
        op.requestBody = {
          required: doc.requestBody.optional !== true,
          ...(doc.requestBody.optional ? { description: 'Optional: the request may have no body.' } : {}),
          content: { [doc.requestBody.mediaType]: { schema: documented(doc.requestBody.schema) } },
        };
      }
      op.responses = {
        ...successAnswers(f, doc, moneyMove),
        ...(conditional ? { '304': share('NotModified', NOT_MODIFIED) } : {}),
        ...errorAnswers(method, path, f, doc, moneyMove, share),
      };
      item[method] = op;
    }
  }
  document.openapi = '3.1.0';
  document.tags = OPENAPI_TAGS.map((t) => ({ ...t }));
  document.components = { ...((document.components as Json | undefined) ?? {}), ...components(cookieName), responses };
  return document;
}

function routeFacts(route: RouteOptions, url: string): RouteFacts {
  const config = (route.config ?? {}) as Json;
  const schema = (route.schema ?? {}) as Json;
  return {
    url,
    auth: (config.auth as RouteFacts['auth'] | undefined) ?? 'none',
    preAuth: config.preAuth === true,
    devOnly: config.devOnly === true,
    area: config.area as ApiArea | undefined,
    spec: typeof config.spec === 'string' ? config.spec : undefined,
    summary: typeof schema.summary === 'string' ? schema.summary : undefined,
    upstream: (config.upstream as RouteFacts['upstream'] | undefined) ?? [],
    contentTypes: (config.contentTypes as readonly string[] | undefined) ?? ['application/json'],
    bodyLimit: route.bodyLimit ?? JSON_BODY_LIMIT,
    cacheControl: typeof config.cacheControl === 'string' ? config.cacheControl : undefined,
    hasInput: schema.body !== undefined || schema.querystring !== undefined || schema.params !== undefined || /[:*]/.test(url),
  };
}

/** The document, its route and the reference page (see the module documentation). */
export const openapi = fp(
  async (app: FastifyInstance, { config }: OpenApiOptions) => {
    if (config.production) return;
    const facts = new Map<string, RouteFacts>();
    await app.register(swagger, {
      openapi: {
        openapi: '3.1.0',
        info: {
          title: 'Front proxy',
          version: config.buildId,
          description: [
            'The routes of the front proxy between the casino and sportsbook web front end and its BFF. Browsers call only these routes; the JWT stays in an HttpOnly session cookie.',
            '',
            '- Errors answer the envelope `{ ok: false, error, detail }` (spec 7.4), except upstream 401 and 403 bodies, passed through byte for byte, and `{ "reason": "no_token" }` on a session route without the cookie. Every error answer carries `X-Error-Ref: EPdddd-EMdddd`.',
            '- State-changing requests (POST, PUT, PATCH, DELETE) from another site answer 403 `csrf_rejected`; JSON routes take only `application/json` bodies (415 otherwise).',
            '- Money amounts are integer cents. `POST /api/payments/deposit` and `POST /api/payments/withdraw` reach the upstream once per submission (`Idempotency-Key`).',
            '- Section numbers ("spec 4.5") name the parts of the specification; see docs/concepts.md in the repository.',
          ].join('\n'),
        },
        // The security schemes are needed while the operations are built; completeDocument adds the rest.
        components: { securitySchemes: (components(config.sessionCookieName) as { securitySchemes: never }).securitySchemes },
      },
      transform: ({ schema, url, route }) => {
        const base = (schema ?? {}) as Json;
        if (base.hide === true) return { schema: base as never, url };
        const path = documentPath(url);
        const routeOptions = route as unknown as RouteOptions;
        const methods = Array.isArray(routeOptions.method) ? routeOptions.method : [routeOptions.method];
        const f = routeFacts(routeOptions, url);
        for (const m of methods) facts.set(`${String(m).toUpperCase()} ${path}`, f);
        const next: Json = { ...base };
        if (url.endsWith('*')) {
          next.params = {
            type: 'object',
            properties: {
              subPath: { type: 'string', description: 'Any sub-path (it may contain `/`), passed on as it is after the safety checks.' },
            },
            required: ['subPath'],
          };
        }
        return { schema: next as never, url: path };
      },
      transformObject: (document) =>
        completeDocument(('openapiObject' in document ? document.openapiObject : {}) as Json, facts, config.sessionCookieName) as never,
    });
    app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
    const { default: swaggerUi } = await import('@fastify/swagger-ui');
    await app.register(swaggerUi, {
      routePrefix: '/docs',
      uiConfig: { deepLinking: true, docExpansion: 'list', displayOperationId: true, tryItOutEnabled: false },
      staticCSP: true,
      // Only this origin: the page loads nothing from another host, and a browser would refuse it.
      // Swagger UI sets element styles from script, hence inline styles (never a remote one).
      transformStaticCSP: (header) =>
        header
          .replace(/ https:/g, '')
          .replace(/ validator\.swagger\.io/g, '')
          .replace(/ ?upgrade-insecure-requests;/, '')
          .replace(/style-src 'self'/, "style-src 'self' 'unsafe-inline'"),
    });
  },
  { name: 'openapi' },
);
