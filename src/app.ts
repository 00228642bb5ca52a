/**
 * `createServer(config?)`: builds the proxy app (Fastify) with its pipeline — request ids, logging with
 * redaction, CSRF defence, auth gate, body validation, route tables, envelope — without listening.
 * `server.ts` listens. With no `BFF_BASE_URL` the embedded sandbox is started and serves every upstream.
 *
 * @module
 */
import { randomUUID, timingSafeEqual } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Duplex, Writable } from 'node:stream';
import cookie from '@fastify/cookie';
import multipart from '@fastify/multipart';
import swagger from '@fastify/swagger';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyContextConfig,
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  LogController,
} from 'fastify';
import pino from 'pino';
import secureJson from 'secure-json-parse';
import { type Config, loadConfig, UPSTREAM_URL_VARIABLES, type UpstreamUrlVariable, withUpstreams } from './config.js';
import { envelope, type ProxyAnswer } from './envelope.js';
import { allRouteTables } from './routes/index.js';
import {
  type AppDeps,
  activeRoutes,
  type RouteContext,
  registerRoutes,
  type ServiceName,
} from './routes/route.js';
import { fetchProfile, fetchRefresh } from './routes/auth.js';
import { readSessionToken } from './session/cookie.js';
import { PROFILE_MAX_ENTRIES, PROFILE_TTL_MS, TokenCache } from './session/profile-cache.js';
import { MIN_REDACTED_TOKEN_LENGTH, redactText } from './session/redact.js';
import { PoolRegistry, type UpstreamRequest, type UpstreamResponse, UpstreamService, type UpstreamStream } from './upstream/client.js';
import { toUpstreamError, UpstreamError } from './upstream/errors.js';
import { UnsafePathError } from './upstream/paths.js';

/** Options of {@link createServer} beyond the configuration, for embedding and tests. */
export interface ServerOptions {
  /** Where log lines go (default: standard output). */
  logStream?: Writable;
  /** Random source for the beacon sampling (spec 6.2); default `Math.random`. */
  random?: () => number;
  /**
   * Server timeouts in milliseconds, each defaulting to {@link SERVER_TIMEOUTS}. Tests shorten them to see
   * slow clients cut off within seconds; production keeps the defaults.
   */
  timeouts?: Partial<ServerTimeouts>;
}

/** Fastify's request-timeout settings (CONTRACT.md leaves them open; Fastify's defaults of 0 never cut a slow client). */
export const SERVER_TIMEOUTS = {
  /** Whole request (headers and body) must arrive within this many milliseconds. */
  requestTimeoutMs: 30_000,
  /** Request headers must arrive within this many milliseconds. */
  headersTimeoutMs: 15_000,
  /** An idle socket is closed after this many milliseconds. */
  connectionTimeoutMs: 60_000,
  /** Keep-alive sockets are kept this many milliseconds between requests. */
  keepAliveTimeoutMs: 5_000,
  /**
   * How often Node checks open connections against the headers and request limits, in milliseconds: a
   * slow client is cut at most this long after its limit (Node's default of 30 s would let a slow-header
   * client hold its socket up to 45 s).
   */
  checkIntervalMs: 5_000,
} as const;

/** The server timeouts, in milliseconds (see {@link SERVER_TIMEOUTS}). */
export type ServerTimeouts = { -readonly [K in keyof typeof SERVER_TIMEOUTS]: number };

/** Production log lines are handed to the destination in batches of about this many characters. */
const LOG_BATCH_CHARS = 16 * 1024;
/** Longest time a production log line waits in its batch, in milliseconds. */
const LOG_BATCH_MS = 250;

function flushLogBatch(batch: LogBatcher): void {
  batch.flush();
}

/**
 * Gathers log lines and passes them on to the destination in writes of about {@link LOG_BATCH_CHARS}
 * characters, or {@link LOG_BATCH_MS} after the first line of a batch: one asynchronous write (one
 * hand-off to a libuv pool thread) per batch rather than per line. Lines are joined once, here
 * (the destination's own `minLength` would measure its growing buffer again on every line).
 */
class LogBatcher {
  readonly #destination: { write(text: string): unknown };
  #lines: string[] = [];
  #size = 0;
  #timer: NodeJS.Timeout | undefined;
  #direct = false;
  constructor(destination: { write(text: string): unknown }) {
    this.#destination = destination;
  }
  /** Takes one line (pino's stream interface). */
  write(line: string): boolean {
    if (this.#direct) {
      this.#destination.write(line);
      return true;
    }
    this.#lines.push(line);
    this.#size += line.length;
    if (this.#size >= LOG_BATCH_CHARS) this.flush();
    else if (this.#timer === undefined) this.#timer = setTimeout(flushLogBatch, LOG_BATCH_MS, this).unref();
    return true;
  }
  /** Passes the lines gathered so far on to the destination. */
  flush(): void {
    if (this.#timer !== undefined) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
    }
    if (this.#size === 0) return;
    const lines = this.#lines;
    this.#lines = [];
    this.#size = 0;
    this.#destination.write(lines.length === 1 ? (lines[0] as string) : lines.join(''));
  }
  /** Flushes, and passes every later line on at once (after the app has closed). */
  stop(): void {
    this.flush();
    this.#direct = true;
  }
}

/** Request body limit for JSON routes, in bytes (1 MiB); larger bodies answer 413. */
export const JSON_BODY_LIMIT = 1024 * 1024;

const SERVICE_VARIABLES: Readonly<Record<ServiceName, UpstreamUrlVariable>> = {
  bff: 'BFF_BASE_URL',
  sticker: 'STICKER_API_URL',
  referralV1: 'REFERRAL_V1_API_URL',
  referralV2: 'REFERRAL_V2_API_URL',
  ftdVerify: 'FTD_CASHBACK_VERIFY_URL',
  ftdSend: 'FTD_CASHBACK_SEND_URL',
  attribution: 'ATTRIBUTION_S2S_URL',
  cachePurge: 'CACHE_PURGE_URL',
};

/** Paths whose answers carry no session and may be cached by the browser. */
const STATE_CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

/** Redaction of logged credentials: `cookie`, `authorization`, `set-cookie` and any `access_token` field. */
export const LOG_REDACT_PATHS = [
  'req.headers.cookie',
  'req.headers.authorization',
  'res.headers["set-cookie"]',
  'headers.cookie',
  'headers.authorization',
  'headers["set-cookie"]',
  'cookie',
  'authorization',
  'access_token',
  '*.access_token',
  '*.*.access_token',
  '*.cookie',
  '*.authorization',
  '*["set-cookie"]',
  // headers logged by plugins at debug/trace level (e.g. the multipart parser's `busboyOptions.headers`)
  '*.headers.cookie',
  '*.headers.authorization',
  '*.headers["set-cookie"]',
];

function mediaType(header: string | undefined): string {
  if (!header) return '';
  const semi = header.indexOf(';');
  return (semi === -1 ? header : header.slice(0, semi)).trim().toLowerCase();
}

function hasBody(request: FastifyRequest): boolean {
  const length = request.headers['content-length'];
  return (length !== undefined && length !== '0') || request.headers['transfer-encoding'] !== undefined;
}

function originAllowed(origin: string, request: FastifyRequest, allowed: readonly string[] | undefined): boolean {
  if (allowed) return allowed.includes(origin);
  try {
    return new URL(origin).host === request.headers.host;
  } catch {
    return false;
  }
}

function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Statuses and envelopes for requests Node's HTTP parser refuses before Fastify sees them. */
const CLIENT_ERRORS: Readonly<Record<string, { status: number; error: string; detail: string }>> = {
  ERR_HTTP_REQUEST_TIMEOUT: { status: 408, error: 'request_timeout', detail: 'The request took too long to arrive' },
  HPE_HEADER_OVERFLOW: { status: 431, error: 'headers_too_large', detail: 'The request headers are too large' },
};

/**
 * Answers a request the HTTP parser refused (malformed, headers over 16 KiB, too slow) with the
 * envelope of spec 7.4, then closes the connection. Resets need no answer.
 */
function answerClientError(error: Error & { code?: string }, socket: Duplex): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const known = CLIENT_ERRORS[error.code ?? ''] ?? { status: 400, error: 'invalid_request', detail: 'The request is malformed' };
  if (socket.writable) {
    const body = JSON.stringify(envelope(known.error, known.detail));
    socket.end(
      `HTTP/1.1 ${known.status} ${STATUS_CODES[known.status]}\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}

/** One log line per request, written when it completes (method, path without query, status, time). */
class OneLinePerRequest extends LogController {
  /**
   * Where the completion lines of requests without an error go: a child of the app's logger made once,
   * without redaction, since the line's fields (request id, method, path, status, time) can never match
   * a redacted path. The line is the same as through the request's logger, without a redaction pass
   * per field and without creating that logger.
   */
  lines: FastifyBaseLogger | undefined;
  override incomingRequest(): void {}
  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    const url = request.url;
    const query = url.indexOf('?');
    const path = query === -1 ? url : url.slice(0, query);
    const ms = Math.round(reply.elapsedTime * 100) / 100;
    if (error) {
      request.log.error({ method: request.method, url: path, statusCode: reply.statusCode, ms, err: error }, 'request errored');
    } else if (this.lines) {
      this.lines.info({ reqId: request.id, method: request.method, url: path, statusCode: reply.statusCode, ms }, 'request completed');
    } else {
      request.log.info({ method: request.method, url: path, statusCode: reply.statusCode, ms }, 'request completed');
    }
  }
}

type LogMethod = (this: FastifyBaseLogger, ...args: unknown[]) => void;
type LogBindings = Parameters<FastifyBaseLogger['child']>[0];
type ChildOptions = Parameters<FastifyBaseLogger['child']>[1];

/**
 * A request's logger, made on its first use: most requests log nothing but their completion line
 * ({@link OneLinePerRequest}), so the pino child (bindings `{ reqId }`, redaction included) is only
 * built for those that log more.
 */
class LazyRequestLogger implements FastifyBaseLogger {
  readonly #parent: FastifyBaseLogger;
  readonly #bindings: LogBindings;
  readonly #options: ChildOptions;
  #logger: FastifyBaseLogger | undefined;
  constructor(parent: FastifyBaseLogger, bindings: LogBindings, options: ChildOptions) {
    this.#parent = parent;
    this.#bindings = bindings;
    this.#options = options;
  }
  #real(): FastifyBaseLogger {
    if (this.#logger === undefined) this.#logger = this.#parent.child(this.#bindings, this.#options);
    return this.#logger;
  }
  get level(): FastifyBaseLogger['level'] {
    return this.#real().level;
  }
  set level(level: FastifyBaseLogger['level']) {
    this.#real().level = level;
  }
  #log(level: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace', args: unknown[]): void {
    const logger = this.#real();
    (logger[level] as LogMethod).apply(logger, args);
  }
  fatal(...args: unknown[]): void {
    this.#log('fatal', args);
  }
  error(...args: unknown[]): void {
    this.#log('error', args);
  }
  warn(...args: unknown[]): void {
    this.#log('warn', args);
  }
  info(...args: unknown[]): void {
    this.#log('info', args);
  }
  debug(...args: unknown[]): void {
    this.#log('debug', args);
  }
  trace(...args: unknown[]): void {
    this.#log('trace', args);
  }
  silent(): void {}
  child(bindings: LogBindings, options?: ChildOptions): FastifyBaseLogger {
    return this.#real().child(bindings, options);
  }
}

/**
 * Builds the proxy. With no `BFF_BASE_URL` it starts the embedded sandbox first and points every
 * upstream at it (closed with the app).
 *
 * @param config - a {@link Config}, or environment-like variables for {@link loadConfig}; default `{}`.
 * @returns the Fastify app, ready to `listen` or `inject`.
 * @throws ConfigError when `config` is a set of variables with invalid values.
 */
export async function createServer(
  config: Config | Record<string, string | undefined> = {},
  options: ServerOptions = {},
): Promise<FastifyInstance> {
  let cfg: Config = 'upstreams' in config ? (config as Config) : loadConfig(config as Record<string, string | undefined>);
  let closeSandbox: (() => Promise<void>) | undefined;
  let sandboxUrls: Partial<Record<UpstreamUrlVariable, string>> | undefined;
  if (cfg.useSandbox) {
    const { startSandbox } = await import('./sandbox/index.js');
    const sandbox = await startSandbox({ logger: false });
    sandboxUrls = {
      BFF_BASE_URL: sandbox.bffUrl,
      STICKER_API_URL: sandbox.stickerApiUrl,
      REFERRAL_V1_API_URL: sandbox.referralV1ApiUrl,
      REFERRAL_V2_API_URL: sandbox.referralV2ApiUrl,
      FTD_CASHBACK_VERIFY_URL: sandbox.ftdCashbackVerifyUrl,
      FTD_CASHBACK_SEND_URL: sandbox.ftdCashbackSendUrl,
      ATTRIBUTION_S2S_URL: sandbox.attributionS2sUrl,
      CACHE_PURGE_URL: sandbox.cachePurgeUrl,
    };
    cfg = withUpstreams(cfg, sandboxUrls);
    closeSandbox = () => sandbox.close();
  }

  // In production, log lines go to standard output through an asynchronous pino destination: a request
  // never waits for a write. Lines are batched first (see LogBatcher); everything is written out on close
  // and at process exit.
  const asyncLog = options.logStream || !cfg.production ? undefined : pino.destination({ dest: 1, sync: false });
  const logBatch = asyncLog ? new LogBatcher(asyncLog) : undefined;
  const flushLogs = (): void => {
    logBatch?.flush();
    try {
      asyncLog?.flushSync();
    } catch {
      // not open yet or already closed: nothing to flush
    }
  };
  if (asyncLog) process.on('exit', flushLogs);
  const logDestination = options.logStream ?? logBatch;
  const logController = new OneLinePerRequest();
  const timeouts: ServerTimeouts = { ...SERVER_TIMEOUTS, ...options.timeouts };
  const app = Fastify({
    logger: {
      level: cfg.logLevel,
      redact: { paths: LOG_REDACT_PATHS, censor: '[redacted]' },
      serializers: {
        req: (req: { method: string; url: string; id: string }) => ({
          method: req.method,
          url: req.url.split('?')[0],
          id: req.id,
        }),
        res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
      },
      ...(logDestination ? { stream: logDestination } : {}),
    },
    logController,
    childLoggerFactory: (logger, bindings, options) => new LazyRequestLogger(logger, bindings, options),
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && SAFE_REQUEST_ID.test(given) ? given : randomUUID();
    },
    requestIdHeader: false,
    bodyLimit: JSON_BODY_LIMIT,
    requestTimeout: timeouts.requestTimeoutMs,
    connectionTimeout: timeouts.connectionTimeoutMs,
    keepAliveTimeout: timeouts.keepAliveTimeoutMs,
    http: { connectionsCheckingInterval: timeouts.checkIntervalMs },
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    routerOptions: { ignoreTrailingSlash: false, ignoreDuplicateSlashes: false, caseSensitive: true, maxParamLength: 256 },
    // A malformed escape or an over-long path parameter is refused by the router before any hook:
    // answer the envelope (spec 7.4) with the usual headers, never Fastify's body that echoes the path.
    frameworkErrors: (_error, request, reply) => {
      (reply as FastifyReply)
        .header('x-request-id', request.id)
        .header('x-content-type-options', 'nosniff')
        .header('cache-control', 'no-store')
        .code(400)
        .send(envelope('invalid_request', 'The request path is not valid'));
    },
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false, useDefaults: true, allErrors: false } },
    clientErrorHandler: answerClientError,
  });
  app.server.headersTimeout = timeouts.headersTimeoutMs;
  logController.lines = app.log.child({}, { redact: [] });

  const pools = new PoolRegistry(cfg.upstreamTimeoutMs);
  const services = {} as Record<ServiceName, UpstreamService>;
  for (const [name, variable] of Object.entries(SERVICE_VARIABLES) as [ServiceName, UpstreamUrlVariable][]) {
    services[name] = new UpstreamService(variable, cfg.upstreams[variable], pools, cfg.upstreamTimeoutMs);
  }
  const deps: AppDeps = {
    config: cfg,
    services,
    profileCache: new TokenCache({ ttlMs: PROFILE_TTL_MS, max: PROFILE_MAX_ENTRIES, fetch: fetchProfile }),
    refreshCache: new TokenCache({ ttlMs: PROFILE_TTL_MS, max: PROFILE_MAX_ENTRIES, fetch: fetchRefresh }),
    random: options.random ?? Math.random,
    caches: new Map(),
  };
  deps.caches.set('profile', deps.profileCache);
  app.decorate('deps', deps);

  // Cookies are parsed by the gate below (one hook for both); the plugin still serialises `setCookie`.
  await app.register(cookie, { hook: false });
  // OpenAPI 3 document of every route, built from the route rows' schemas (served outside production).
  await app.register(swagger, {
    openapi: {
      info: { title: 'Front proxy', version: cfg.buildId, description: 'The /api routes of the front proxy (spec part 4).' },
      components: {
        securitySchemes: {
          sessionCookie: { type: 'apiKey', in: 'cookie', name: cfg.sessionCookieName },
          operatorBearer: { type: 'http', scheme: 'bearer' },
        },
      },
    },
  });

  // JSON bodies: prototype poisoning refused, an empty body allowed (a POST without a payload).
  app.removeContentTypeParser(['application/json', 'text/plain']);
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
    const text = body as string;
    if (text.length === 0) {
      done(null, undefined);
      return;
    }
    try {
      done(null, secureJson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' }));
    } catch {
      const error = new Error('Body is not valid JSON') as FastifyError;
      error.statusCode = 400;
      error.code = 'FST_ERR_CTP_INVALID_JSON_BODY';
      done(error, undefined);
    }
  });

  // Pipeline (DESIGN.md "One request"): headers, CSRF defence, auth gate, media type — all before the body is read.
  // A plain function, not an async hook: no promise per request. It answers a refusal itself (and the
  // request goes no further) or returns `undefined` to let the request through.
  const gate = (request: FastifyRequest, reply: FastifyReply): FastifyReply | undefined => {
    const cookieHeader = request.headers.cookie;
    request.cookies = cookieHeader ? app.parseCookie(cookieHeader) : {};
    reply.header('x-request-id', request.id);
    reply.header('x-content-type-options', 'nosniff');
    const routeConfig = request.routeOptions.config;
    if (request.url.startsWith('/api/')) reply.header('cache-control', 'no-store');
    if (STATE_CHANGING.has(request.method)) {
      const site = request.headers['sec-fetch-site'];
      const origin = request.headers.origin;
      if (site === 'cross-site') {
        return reply.code(403).send(envelope('csrf_rejected', 'Cross-site requests are not allowed'));
      }
      if (origin !== undefined && !originAllowed(origin, request, cfg.allowedOrigins)) {
        return reply.code(403).send(envelope('csrf_rejected', 'This origin may not send this request'));
      }
    }
    const auth = routeConfig.auth;
    if (auth === 'required' && readSessionToken(request, cfg) === undefined) {
      return reply.code(401).send({ reason: 'no_token' });
    }
    if (auth === 'operator') {
      if (!cfg.cachePurgeToken) {
        return reply.code(503).send(envelope('not_configured', 'CACHE_PURGE_TOKEN is not set'));
      }
      const header = request.headers.authorization ?? '';
      const given = header.startsWith('Bearer ') ? header.slice(7) : '';
      if (!sameSecret(given, cfg.cachePurgeToken)) {
        return reply.code(401).send(envelope('operator_credential_required', 'A valid operator credential is required'));
      }
    }
    if (STATE_CHANGING.has(request.method) && hasBody(request) && routeConfig.contentTypes) {
      const type = mediaType(request.headers['content-type']);
      if (!routeConfig.contentTypes.includes(type)) {
        return reply
          .code(415)
          .send(envelope('unsupported_media_type', `Expected ${routeConfig.contentTypes.join(' or ')}`));
      }
    }
    return undefined;
  };
  app.addHook('onRequest', (request, reply, done) => {
    if (gate(request, reply) === undefined) done();
  });

  app.setErrorHandler((error: FastifyError, request, reply) => {
    // An undici error reaching here (a streamed answer that broke before its first byte was sent) is an
    // upstream failure too: the envelope of CONTRACT.md, not a 500.
    const upstreamFailure =
      error instanceof UpstreamError
        ? error
        : typeof error.code === 'string' && error.code.startsWith('UND_ERR_')
          ? toUpstreamError(error)
          : undefined;
    if (upstreamFailure) {
      request.log.warn({ code: upstreamFailure.code, cause: (upstreamFailure.cause as Error | undefined)?.message }, 'upstream failure');
      return reply.code(upstreamFailure.status).send(envelope(upstreamFailure.code, upstreamFailure.detail));
    }
    if (error instanceof UnsafePathError) {
      return reply.code(400).send(envelope('invalid_request', error.message));
    }
    if (error.validation) {
      const where = error.validationContext ?? 'request';
      const first = error.validation[0];
      const field = first?.instancePath ? `${where}${first.instancePath.replace(/\//g, '.')}` : where;
      return reply.code(400).send(envelope('invalid_request', `${field} ${first?.message ?? 'is invalid'}`));
    }
    switch (error.code) {
      case 'FST_ERR_CTP_BODY_TOO_LARGE':
        return reply.code(413).send(envelope('payload_too_large', 'The request body is too large'));
      case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
        return reply.code(415).send(envelope('unsupported_media_type', 'Expected application/json'));
      case 'FST_ERR_CTP_INVALID_JSON_BODY':
      case 'FST_ERR_CTP_EMPTY_JSON_BODY':
        return reply.code(400).send(envelope('invalid_request', 'The body is not valid JSON'));
      default:
        break;
    }
    const status = error.statusCode;
    if (status && status >= 400 && status < 500) {
      const detail = status === 400 && /proto|constructor/i.test(error.message) ? 'The body is not allowed' : 'The request is invalid';
      return reply.code(status).send(envelope('invalid_request', detail));
    }
    request.log.error({ err: error }, 'unhandled error');
    return reply.code(500).send(envelope('internal_error', 'Internal error'));
  });

  app.setNotFoundHandler((request, reply) => {
    reply.code(404).send(envelope('not_found', `No route ${request.method} ${request.url.split('?')[0]}`.slice(0, 200)));
  });

  /**
   * The {@link RouteContext} of one request. Its upstream calls are methods on the prototype rather than
   * closures made per request; the proxy's headers are built once per call and merged in the client.
   */
  class RequestContext implements RouteContext {
    readonly request: FastifyRequest;
    readonly reply: FastifyReply;
    readonly body: unknown;
    readonly query: unknown;
    readonly params: unknown;
    readonly token: string | undefined;
    readonly deps: AppDeps;
    readonly routeConfig: FastifyContextConfig | undefined;
    constructor(request: FastifyRequest, reply: FastifyReply, routeConfig: FastifyContextConfig | undefined) {
      this.request = request;
      this.reply = reply;
      this.body = request.body;
      this.query = request.query;
      this.params = request.params;
      this.token = readSessionToken(request, cfg);
      this.deps = deps;
      this.routeConfig = routeConfig;
    }
    call(service: ServiceName, req: UpstreamRequest, options?: { bearer?: string | null }): Promise<UpstreamResponse> {
      return services[service].request(req, this.#proxyHeaders(service, options?.bearer));
    }
    stream(service: ServiceName, req: UpstreamRequest): Promise<UpstreamStream> {
      return services[service].stream(req, this.#proxyHeaders(service, undefined));
    }
    /** The headers the proxy sets on an upstream call; they override the route's own. */
    #proxyHeaders(service: ServiceName, bearer: string | null | undefined): Record<string, string> {
      const request = this.request;
      const headers: Record<string, string> = { 'x-request-id': request.id, 'x-forwarded-for': request.ip };
      const ua = request.headers['user-agent'];
      if (ua) headers['user-agent'] = ua.slice(0, 512);
      const lang = request.headers['accept-language'];
      if (lang) headers['accept-language'] = lang.slice(0, 128);
      const jwt = bearer === undefined ? this.token : bearer;
      if (jwt) headers.authorization = `Bearer ${jwt}`;
      if (request.headers.cookie && (service === 'bff' || jwt)) headers.cookie = request.headers.cookie;
      return headers;
    }
  }
  const makeContext = (request: FastifyRequest, reply: FastifyReply, routeConfig?: FastifyContextConfig): RouteContext =>
    new RequestContext(request, reply, routeConfig);

  const send = (reply: FastifyReply, answer: ProxyAnswer, ctx: RouteContext): FastifyReply => {
    reply.code(answer.status);
    if (answer.status < 400) {
      const cacheControl = (ctx.routeConfig ?? reply.request.routeOptions.config).cacheControl;
      if (cacheControl) reply.header('cache-control', cacheControl);
    }
    let body = answer.body;
    if (body === null) return reply.send();
    if (!Buffer.isBuffer(body) && typeof body !== 'string') {
      body = JSON.stringify(body);
      reply.type('application/json; charset=utf-8');
    } else if (answer.contentType) {
      // The only header a buffered answer takes from the upstream: the JWT never appears in a response
      // header other than the session cookie (CONTRACT.md "Session cookie"). Streamed answers go
      // through `sendRedactedStream`, which checks every header.
      reply.type(redactText(answer.contentType, ctx.token));
    }
    // The JWT never appears in a response body (CONTRACT.md "Session cookie"), whatever the upstream sent.
    // A cookie value too short to be a credential ("a", "1") is not redacted: it would mangle the body.
    const token = ctx.token;
    if (token && token.length >= MIN_REDACTED_TOKEN_LENGTH && (Buffer.isBuffer(body) ? body.includes(token) : body.includes(token))) {
      body = body.toString().replaceAll(token, '[redacted]');
    }
    return reply.send(body);
  };

  // Upload rows (`contentTypes` with multipart/form-data) get the multipart parser in their own scope only.
  const routes = activeRoutes(allRouteTables, cfg);
  const uploads = routes.filter((r) => r.contentTypes?.includes('multipart/form-data'));
  registerRoutes(app, routes.filter((r) => !uploads.includes(r)), makeContext, send);
  await app.register(async (scope) => {
    await scope.register(multipart);
    registerRoutes(scope, uploads, makeContext, send);
  });

  if (!cfg.production) {
    app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  }
  app.get('/healthz', { schema: { hide: true } }, async () => ({ ok: true }));
  let ready: { at: number; ok: boolean } | undefined;
  app.get('/readyz', { schema: { hide: true } }, async (_request, reply) => {
    const now = Date.now();
    if (!ready || now - ready.at > 2_000) {
      const probe = services.bff
        .request({ method: 'GET', path: '/' })
        .then(() => true)
        .catch((error: unknown) => error instanceof UpstreamError && error.code === 'upstream_bad_response');
      const timeout = new Promise<boolean>((resolve) => setTimeout(resolve, 2_000, false).unref());
      ready = { at: now, ok: await Promise.race([probe, timeout]) };
    }
    reply.header('cache-control', 'no-store');
    return reply.code(ready.ok ? 200 : 503).send(ready.ok ? { ok: true } : envelope('not_ready', 'The BFF cannot be reached'));
  });

  app.addHook('onClose', async () => {
    await pools.close();
    if (closeSandbox) await closeSandbox();
    logBatch?.stop();
    flushLogs();
    process.removeListener('exit', flushLogs);
  });
  app.decorate('sandboxUrls', sandboxUrls);
  return app;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Shared state of the routes (configuration, upstream services, caches). */
    deps: AppDeps;
    /** The sandbox's URLs when the embedded sandbox serves the upstreams, else `undefined`. */
    sandboxUrls: Partial<Record<UpstreamUrlVariable, string>> | undefined;
  }
}

export { loadConfig, UPSTREAM_URL_VARIABLES };
export type { Config };
