/**
 * Pipeline step **client errors** (before any hook: in Node's HTTP parser and Fastify's router): the
 * server's time limits for slow clients, and the envelope of spec 7.4 for requests refused before
 * Fastify routes them — malformed requests (400), headers over 16 KiB (431), too slow (408), a
 * malformed escape or an over-long path parameter (400). Such answers never echo the request.
 *
 * Two requests Node's parser lets through are refused by the step's first `onRequest` hook, with the
 * envelope, `X-Error-Ref` and `Connection: close`: a request line without an HTTP version (HTTP/0.9
 * style, `GET /path` alone, which llhttp also reads out of a line cut by a bare LF), 400; and an
 * HTTP/1.1 request without `Host` (RFC 9112 §3.2), 400 — Node's own check (`requireHostHeader`)
 * answers a bare 400 without a body, so it is turned off and made here.
 *
 * @module
 */
import { type IncomingMessage, STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyServerOptions } from 'fastify';
import fp from 'fastify-plugin';
import { envelope } from '../envelope.js';
import type { ProxyErrorName } from '../proxy-errors.js';
import { ERROR_REF_HEADER, errorRefOf } from './error-ref.js';

/**
 * Fastify's request-timeout settings (docs/behaviour.md leaves them open; Fastify's defaults of 0 never cut a
 * slow client). The idle time of a kept-alive connection between requests is the configuration's
 * `KEEP_ALIVE_TIMEOUT_MS` instead (65 s by default, longer than a load balancer's idle timeout).
 *
 * Node's rules: `headersTimeout` must not exceed `requestTimeout` (15 s ≤ 30 s). The old advice to keep
 * `headersTimeout` above `keepAliveTimeout` no longer applies: since Node 18 the headers limit counts
 * from the first byte of a request, not from the end of the previous one, so a connection idle for up
 * to `KEEP_ALIVE_TIMEOUT_MS` then sending its next request is not cut; between requests the socket's
 * time limit is the keep-alive one, not `connectionTimeoutMs`.
 */
export const SERVER_TIMEOUTS = {
  /** Whole request (headers and body) must arrive within this many milliseconds. */
  requestTimeoutMs: 30_000,
  /** Request headers must arrive within this many milliseconds. */
  headersTimeoutMs: 15_000,
  /** A socket with a request under way that sends or receives nothing is closed after this many milliseconds. */
  connectionTimeoutMs: 60_000,
  /**
   * How often Node checks open connections against the headers and request limits, in milliseconds: a
   * slow client is cut at most this long after its limit (Node's default of 30 s would let a slow-header
   * client hold its socket up to 45 s).
   */
  checkIntervalMs: 5_000,
} as const;

/** The server timeouts, in milliseconds (see {@link SERVER_TIMEOUTS}). */
export type ServerTimeouts = { -readonly [K in keyof typeof SERVER_TIMEOUTS]: number };

/** Statuses and envelopes for requests Node's HTTP parser refuses before Fastify sees them. */
const CLIENT_ERRORS: Readonly<Record<string, { status: number; error: ProxyErrorName; detail: string }>> = {
  ERR_HTTP_REQUEST_TIMEOUT: { status: 408, error: 'request_timeout', detail: 'The request took too long to arrive' },
  HPE_HEADER_OVERFLOW: { status: 431, error: 'headers_too_large', detail: 'The request headers are too large' },
};

/** The body of a path the router refuses (a malformed escape, an over-long parameter). */
const ROUTER_REFUSAL_TEXT = JSON.stringify(envelope('invalid_request', 'The request path is not valid'));

/** The request line at the start of a packet: method and target (`GET /api/x HTTP/1.1`). */
const REQUEST_LINE = /^([A-Z]{1,16}) (\S{1,8192}) HTTP\/\d\.\d\r?\n/;

/**
 * The method and target of a refused request, as far as they can be known: the request being answered
 * on the socket when there is one (a body too slow; `socket._httpMessage`, the response Node itself
 * checks before answering a client error), else the request line at the start of the packet
 * the parser refused (headers too large, malformed headers). When neither is there (the headers were too
 * slow, or arrived in several packets) the reference has EP0000, an unknown URL (spec 7.2).
 */
function refusedRequest(error: Error & { rawPacket?: unknown }, socket: Duplex): { method?: string; url?: string } {
  const current = (socket as { _httpMessage?: { req?: { method?: string; url?: string } } })._httpMessage?.req;
  if (current?.url !== undefined) return { method: current.method, url: current.url };
  const packet = error.rawPacket;
  if (!(packet instanceof Uint8Array)) return {};
  const line = REQUEST_LINE.exec(Buffer.from(packet.buffer, packet.byteOffset, Math.min(packet.byteLength, 8_300)).toString('latin1'));
  return line ? { method: line[1], url: line[2] } : {};
}

/**
 * Answers a request the HTTP parser refused (malformed, headers over 16 KiB, too slow) with the
 * envelope of spec 7.4 and its `X-Error-Ref` (pipeline/error-ref.ts), logs one line with the reference,
 * then closes the connection. Resets need no answer.
 */
function answerClientError(
  this: FastifyInstance,
  onRefused: ((reason: RefusalReason) => void) | undefined,
  error: Error & { code?: string; rawPacket?: unknown },
  socket: Duplex,
): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const known = CLIENT_ERRORS[error.code ?? ''] ?? { status: 400, error: 'invalid_request', detail: 'The request is malformed' };
  onRefused?.(known.status === 408 ? 'timeout' : known.status === 431 ? 'headers_too_large' : 'malformed');
  if (socket.writable) {
    const body = JSON.stringify(envelope(known.error, known.detail));
    const { method, url } = refusedRequest(error, socket);
    const ref = errorRefOf({ status: known.status, method, url, contentType: 'application/json', body });
    socket.end(
      `HTTP/1.1 ${known.status} ${STATUS_CODES[known.status]}\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nCache-Control: no-store\r\nX-Error-Ref: ${ref}\r\nConnection: close\r\n\r\n${body}`,
    );
    const path = url === undefined ? undefined : url.split('?')[0]?.slice(0, 200);
    this.log.info({ method, url: path, statusCode: known.status, ref, code: error.code }, 'request refused');
  }
  socket.destroy();
}

/**
 * Why a request Node's parser accepted is refused (see the module documentation), or `undefined`
 * when it is not: a version other than HTTP/1.x (a request line without one is read as HTTP/0.9), or
 * HTTP/1.1 without a `Host` header (HTTP/1.0 may omit it).
 */
export function protocolRefusal(raw: Pick<IncomingMessage, 'httpVersionMajor' | 'httpVersionMinor' | 'headers'>): string | undefined {
  if (raw.httpVersionMajor !== 1) return 'The request line has no HTTP/1.x version';
  if (raw.httpVersionMinor !== 0 && raw.headers.host === undefined) return 'The request has no Host header';
  return undefined;
}

/**
 * Why a request was refused before routing (`http_refused_total` `reason`): the parser's `malformed`,
 * `headers_too_large` and `timeout`; the router's `path` (a malformed escape, an over-long
 * parameter); `protocol` (no HTTP/1.x version, no `Host`); `max_connections` (a connection over
 * `MAX_CONNECTIONS`, closed at accept).
 */
export type RefusalReason = 'malformed' | 'headers_too_large' | 'timeout' | 'path' | 'protocol' | 'max_connections';

/** The client-error step of one app: Fastify constructor options and the plugin that completes them. */
export interface ClientErrors {
  readonly options: Pick<
    FastifyServerOptions,
    'requestTimeout' | 'connectionTimeout' | 'keepAliveTimeout' | 'frameworkErrors' | 'clientErrorHandler'
  > & { http: { connectionsCheckingInterval: number; requireHostHeader: false } };
  readonly plugin: FastifyPluginAsync;
  /** Told of each refusal before routing, with its reason (the metrics, set once they exist). */
  onRefused: ((reason: RefusalReason) => void) | undefined;
}

/**
 * The time limits (each {@link SERVER_TIMEOUTS} value unless given), the parser's refusals and the
 * router's. The plugin sets the headers limit on the HTTP server, which Fastify has no option for.
 *
 * @param keepAliveTimeoutMs - idle time of a kept-alive client connection, in milliseconds
 *   (`KEEP_ALIVE_TIMEOUT_MS`, docs/behaviour.md "Configuration").
 * @param timeouts - replacements of {@link SERVER_TIMEOUTS} values, in milliseconds (tests).
 */
export function createClientErrors(keepAliveTimeoutMs: number, timeouts: Partial<ServerTimeouts> = {}): ClientErrors {
  const t: ServerTimeouts = { ...SERVER_TIMEOUTS, ...timeouts };
  const step: ClientErrors = {
    onRefused: undefined,
    options: {
      requestTimeout: t.requestTimeoutMs,
      connectionTimeout: t.connectionTimeoutMs,
      keepAliveTimeout: keepAliveTimeoutMs,
      // The Host check is the plugin's hook, which answers the envelope (see the module documentation).
      http: { connectionsCheckingInterval: t.checkIntervalMs, requireHostHeader: false },
      // A malformed escape or an over-long path parameter is refused by the router before any hook:
      // answer the envelope (spec 7.4) with the usual headers, never Fastify's body that echoes the path.
      // Such an answer skips the hooks (no onSend, no completion line): its reference and its line are made here.
      frameworkErrors: (_error, request, reply) => {
        step.onRefused?.('path');
        const ref = errorRefOf({
          status: 400,
          method: request.method,
          url: request.url,
          contentType: 'application/json',
          body: ROUTER_REFUSAL_TEXT,
        });
        (reply as FastifyReply)
          .header('x-request-id', request.id)
          .header('x-content-type-options', 'nosniff')
          .header('cache-control', 'no-store')
          .header(ERROR_REF_HEADER, ref)
          .code(400)
          .type('application/json; charset=utf-8')
          .send(ROUTER_REFUSAL_TEXT);
        request.log.info(
          { method: request.method, url: request.url.split('?')[0]?.slice(0, 200), statusCode: 400, ref },
          'request refused',
        );
      },
      clientErrorHandler(this: FastifyInstance, error: Error, socket: Duplex) {
        answerClientError.call(this, step.onRefused, error, socket);
      },
    },
    plugin: fp(
      async (app: FastifyInstance) => {
        app.server.headersTimeout = t.headersTimeoutMs;
        // A connection over MAX_CONNECTIONS is closed by Node at accept ('drop').
        app.server.on('drop', () => step.onRefused?.('max_connections'));
        app.addHook('onRequest', (request, reply, done) => {
          const refusal = protocolRefusal(request.raw);
          if (refusal === undefined) {
            done();
            return;
          }
          step.onRefused?.('protocol');
          reply.header('connection', 'close').code(400).send(envelope('invalid_request', refusal));
        });
      },
      { name: 'client-errors' },
    ),
  };
  return step;
}
