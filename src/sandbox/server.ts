/**
 * The plumbing shared by the three sandbox servers: body parsers, the request recorder, the
 * fail-next and fault interceptor (a fail-next rule is tried first), BFF-style 404/500 bodies, the common admin routes and the areas.
 *
 * @module
 */
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest, LogController } from 'fastify';
import { commonAdminArea } from './admin.js';
import { attachContext, type SandboxArea, type SandboxContext } from './context.js';
import { type AnswerCoding, driftAnswer, type FaultRule } from './faults.js';
import type { RecordedRequest } from './traffic.js';

/** Options of {@link createSandboxServer}. */
export interface SandboxServerOptions {
  /** Logger of the server; none when undefined. */
  logger?: FastifyBaseLogger;
  /** Log every request (Fastify's `incoming request` / `request completed`). Default false. */
  requestLogging?: boolean;
}

/** Prefix of the admin routes; requests under it are never recorded nor intercepted. */
export const ADMIN_PREFIX = '/__sandbox/';

const entries = new WeakMap<FastifyRequest, RecordedRequest>();
/** Requests whose real answer an `answer` fault rule spoils as it leaves. */
const spoilt = new WeakMap<FastifyRequest, FaultRule>();

function splitUrl(url: string): { path: string } {
  const q = url.indexOf('?');
  return { path: q < 0 ? url : url.slice(0, q) };
}

function headerValue(value: string | string[] | undefined): string | null {
  if (value === undefined) return null;
  return Array.isArray(value) ? value.join(', ') : value;
}

function isTextual(contentType: string): boolean {
  return /^text\/|json|xml|x-www-form-urlencoded/i.test(contentType);
}

function describeBody(body: unknown): unknown {
  if (body === undefined) return null;
  if (Buffer.isBuffer(body)) return { binary: true, bytes: body.length };
  return body;
}

/** An answer of a fail-next or fault rule instead of the real one. */
interface InjectedAnswer {
  status?: number;
  body?: unknown;
  rawBody?: string;
  contentType?: string;
  headers?: Record<string, string>;
}

function sendInjected(reply: FastifyReply, rule: InjectedAnswer): FastifyReply {
  reply.code(rule.status ?? 500);
  for (const [name, value] of Object.entries(rule.headers ?? {})) reply.header(name, value);
  if (rule.rawBody !== undefined) {
    return reply.type(rule.contentType ?? 'text/plain; charset=utf-8').send(rule.rawBody);
  }
  if (rule.body !== undefined) {
    return reply.type(rule.contentType ?? 'application/json; charset=utf-8').send(JSON.stringify(rule.body));
  }
  if (rule.contentType) reply.type(rule.contentType);
  return reply.send();
}

/** The encoder of each coding a `compressed` answer rule may use. */
const ENCODERS: Readonly<Record<AnswerCoding, (data: Buffer) => Buffer>> = {
  gzip: (data) => gzipSync(data),
  deflate: (data) => deflateSync(data),
  br: (data) => brotliCompressSync(data),
};

/**
 * The real answer's payload as an `answer` fault rule spoils it (`faults.ts`, `AnswerFault`):
 * `compressed` with the rule's coding (and `Content-Encoding`, whatever the caller asked for),
 * `truncated` to its first half, `empty` without a body, `drifted` with its `field` changed
 * (`driftAnswer`). A streamed payload is left as it is.
 */
function spoilAnswer(reply: FastifyReply, payload: unknown, rule: FaultRule): unknown {
  if (typeof payload !== 'string' && !Buffer.isBuffer(payload)) return payload;
  const bytes = typeof payload === 'string' ? Buffer.from(payload) : payload;
  switch (rule.answer) {
    case 'compressed': {
      const coding = rule.coding ?? 'gzip';
      reply.header('content-encoding', coding);
      return ENCODERS[coding](bytes);
    }
    case 'truncated':
      return bytes.subarray(0, Math.floor(bytes.length / 2));
    case 'empty':
      return '';
    case 'drifted': {
      let json: unknown;
      try {
        json = JSON.parse(bytes.toString('utf8'));
      } catch {
        return payload; // not JSON: nothing to drift
      }
      return JSON.stringify(driftAnswer(json, rule.field ?? '', rule.drift, rule.value));
    }
    default:
      return payload;
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

/**
 * Builds one sandbox server (not listening yet) with its areas.
 *
 * @param ctx the server's context (attached to the instance, see `sandboxContext`)
 * @param areas registered in order, each in its own encapsulated plugin
 */
export async function createSandboxServer(
  ctx: SandboxContext,
  areas: readonly SandboxArea[],
  options: SandboxServerOptions = {},
): Promise<FastifyInstance> {
  const app: FastifyInstance = Fastify({
    ...(options.logger ? { loggerInstance: options.logger } : { logger: false }),
    logController: new LogController({ disableRequestLogging: options.requestLogging !== true }),
    forceCloseConnections: true,
    bodyLimit: 10 * 1024 * 1024,
  });
  attachContext(app, ctx);
  const faults = ctx.store.faults[ctx.server];

  // Bodies: lenient JSON (an empty body is no body), forms, and anything else kept as text or bytes.
  app.removeContentTypeParser(['application/json', 'text/plain']);
  app.addContentTypeParser(/^application\/([\w.+-]+\+)?json/i, { parseAs: 'string' }, (_request, text, done) => {
    const source = String(text);
    if (source.trim() === '') return done(null, undefined);
    try {
      done(null, JSON.parse(source));
    } catch {
      done(Object.assign(new Error('Malformed JSON body'), { statusCode: 400, code: 'invalid_json' }), undefined);
    }
  });
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (request, buffer, done) => {
    const contentType = request.headers['content-type'] ?? '';
    const bytes = buffer as Buffer;
    if (bytes.length === 0) return done(null, undefined);
    if (/x-www-form-urlencoded/i.test(contentType)) {
      return done(null, Object.fromEntries(new URLSearchParams(bytes.toString('utf8'))));
    }
    done(null, isTextual(contentType) || contentType === '' ? bytes.toString('utf8') : bytes);
  });

  app.addHook('onRequest', async (request) => {
    if (request.url.startsWith(ADMIN_PREFIX)) return;
    const { path } = splitUrl(request.url);
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(request.headers)) {
      const text = headerValue(value);
      if (text !== null) headers[name] = text;
    }
    const authorization = headers.authorization;
    let tokenUserId: number | null = null;
    let tokenSessionId: string | null = null;
    if (authorization !== undefined) {
      headers.authorization = /^bearer\s/i.test(authorization) ? 'Bearer [redacted]' : '[redacted]';
      const match = /^bearer\s+(\S+)/i.exec(authorization);
      if (match?.[1]) {
        const check = await ctx.tokens.verify(match[1]);
        if ('claims' in check) {
          tokenUserId = check.claims.userId;
          tokenSessionId = check.claims.sessionId;
        }
      }
    }
    const entry = ctx.traffic.record({
      at: ctx.store.now(),
      method: request.method,
      url: request.url,
      path,
      headers,
      authorization: authorization !== undefined,
      tokenUserId,
      tokenSessionId,
      cookie: headerValue(request.headers.cookie),
      body: null,
      status: null,
      injected: false,
      fault: null,
    });
    entries.set(request, entry);
  });

  app.addHook('preHandler', async (request, reply) => {
    const entry = entries.get(request);
    if (!entry) return;
    entry.body = describeBody(request.body);
    const rule = ctx.traffic.take(request.method, request.url, entry.path);
    if (rule) {
      entry.injected = true;
      request.log.info({ path: entry.path, status: rule.status, action: rule.action ?? 'respond' }, 'sandbox fail-next rule applied');
      if (rule.delayMs) await sleep(rule.delayMs);
      if (rule.action === 'reset') {
        reply.hijack();
        request.raw.socket.destroy();
        return;
      }
      return sendInjected(reply, rule);
    }

    const fault = faults.match(request.method, request.url, entry.path, reply.raw);
    if (!fault) return;
    entry.fault = fault.rule.kind;
    const outcome = await fault.outcome;
    if (outcome === 'gone' || outcome === 'refused' || outcome === 'closed') {
      // No answer: the client left, or the connection was destroyed (refused, or the server closes).
      if (outcome === 'refused')
        request.log.warn({ path: entry.path, held: faults.heldCount }, 'sandbox fault: too many held requests, connection destroyed');
      reply.hijack();
      return;
    }
    if (outcome === 'elapsed' && fault.rule.kind === 'fail') {
      entry.injected = true;
      return sendInjected(reply, fault.rule);
    }
    if (outcome === 'elapsed' && fault.rule.answer !== undefined) {
      entry.injected = true;
      spoilt.set(request, fault.rule);
    }
    // A slow rule's delay is over, or the rule was removed: the real answer (spoilt by an answer rule, below).
  });

  // An answer rule spoils the real answer as it leaves (faults.ts, AnswerFault).
  app.addHook('onSend', async (request, reply, payload) => {
    const rule = spoilt.get(request);
    if (rule === undefined) return payload;
    spoilt.delete(request);
    return spoilAnswer(reply, payload, rule);
  });

  // Held requests must not keep the server open: their connections are destroyed first.
  app.addHook('preClose', async () => {
    faults.closeAll();
  });

  app.addHook('onResponse', async (request, reply) => {
    const entry = entries.get(request);
    if (entry) entry.status = reply.statusCode;
  });

  app.setNotFoundHandler((request, reply) => {
    reply.code(404).send({ message: `Route ${request.method} ${splitUrl(request.url).path} not found`, reason: 'not_found' });
  });

  app.setErrorHandler((error, request, reply) => {
    const err = error as { statusCode?: number; code?: string; message?: string };
    const status = typeof err.statusCode === 'number' && err.statusCode >= 400 ? err.statusCode : 500;
    if (status >= 500) {
      request.log.error({ err: error }, 'sandbox handler failed');
      return reply.code(status).send({ message: 'Server Error', reason: 'server_error' });
    }
    const reason = err.code === 'invalid_json' ? 'invalid_json' : status === 413 ? 'payload_too_large' : 'bad_request';
    return reply.code(status).send({ message: err.message ?? 'Bad request', reason });
  });

  for (const area of [commonAdminArea, ...areas]) {
    await app.register(
      async (child) => {
        await area.register(child, ctx);
      },
      area.prefix ? { prefix: area.prefix } : {},
    );
  }
  return app;
}
