/**
 * WebSockets through the raw passthrough (docs/behaviour.md "Live streams", "WebSockets"), relayed with
 * `ws` (no framing of the proxy's own):
 *
 * - An upgrade request goes through the whole pipeline like any request ({@link acceptUpgrades} hands
 *   it to Fastify's router): the auth gate, the rate limits, load shedding and the passthrough's path
 *   check run before anything is opened; a refusal is an ordinary HTTP answer on the socket.
 * - The handshake is refused (403 `csrf_rejected`, nothing upstream) unless its `Origin` is the site's
 *   own or in `ALLOWED_ORIGINS` ({@link originAllowed}, the CSRF rule): browsers apply no CORS to it.
 * - The upstream socket is opened first, with the proxy's headers (with a session: the Bearer, and the
 *   `Cookie` without the session cookie); only once it is open is the browser's upgraded, so that an
 *   upstream refusal is answered as the passthrough answers it (the envelope; 401/403 byte for byte).
 * - Messages have a size limit each way ({@link WS_LIMITS}), the browser's messages a rate limit, and
 *   what either side has not taken yet a bound: over it the socket closes (1013, `slow_consumer`).
 *   Ping/pong finds dead peers. Messages from upstream are scrubbed of the session cookie's values.
 * - Closes the proxy decides: `session_ended` (4001) when the session ends, 1001 on drain, at the
 *   end of its lifetime and for a dead peer; an upstream close is passed on with its code.
 *
 * @module
 */
import { type IncomingMessage, ServerResponse, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import WebSocket, { type RawData, WebSocketServer } from 'ws';
import type { Config } from '../config.js';
import { envelope, JSON_CONTENT_TYPE, type ProxyAnswer, upstreamFailureAnswer } from '../envelope.js';
import { originAllowed } from '../session/client.js';
import { redactBody, redactText } from '../session/redact.js';
import type { EndReason } from './sse-relay.js';
import { readSome } from './upstream.js';

/** The limits of a relayed WebSocket. */
export const WS_LIMITS = Object.freeze({
  /** Largest message from the browser, in bytes; larger closes the socket (1009). */
  clientMessageBytes: 64 * 1024,
  /** Largest message from upstream, in bytes. */
  upstreamMessageBytes: 1024 * 1024,
  /** Messages a browser may send per second, on average. */
  clientMessagesPerSecond: 20,
  /** Messages a browser may send at once after a quiet while. */
  clientMessageBurst: 40,
  /** Bytes either side may leave untaken before the socket closes (1013 `slow_consumer`). */
  bufferBytes: 256 * 1024,
  /**
   * Time between pings to each peer, in milliseconds: a peer that has not answered the last ping when
   * the next is due is cut, so one that falls silent is cut within two intervals (60 s).
   */
  pingIntervalMs: 30_000,
  /** Once a close is sent, how long the peer has to answer it before its socket is destroyed, in milliseconds. */
  closeGraceMs: 1_000,
});

/** The close codes and reasons the proxy sends (RFC 6455 §7.4; 4001 is the proxy's own). */
export const WS_CLOSE = Object.freeze({
  session: { code: 4001, reason: 'session_ended' },
  drain: { code: 1001, reason: 'going_away' },
  lifetime: { code: 1001, reason: 'going_away' },
  /** A dead peer (no pong to the last ping): sent to the other side, the dead one's socket destroyed. */
  dead_peer: { code: 1001, reason: 'going_away' },
  slow_consumer: { code: 1013, reason: 'slow_consumer' },
  rate_limited: { code: 1008, reason: 'rate_limited' },
} as const);

/** Where {@link acceptUpgrades} keeps an upgrade's socket and first bytes on its request. */
const UPGRADE = Symbol('front-proxy.upgrade');

interface Upgrade {
  readonly socket: Duplex;
  readonly head: Buffer;
}

/**
 * Hands every upgrade request of `server` to Fastify's router (`routing`), with a response bound to
 * its socket: the pipeline answers it like any request, and the passthrough's handler upgrades it
 * ({@link WebSocketRelay}). A socket nobody upgraded is closed once its answer is written.
 */
export function acceptUpgrades(server: Server, routing: (req: IncomingMessage, res: ServerResponse) => void): void {
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => socket.destroy());
    (req as IncomingMessage & { [UPGRADE]?: Upgrade })[UPGRADE] = { socket, head };
    const res = new ServerResponse(req);
    res.shouldKeepAlive = false;
    res.assignSocket(socket as never);
    res.once('finish', () => socket.end());
    routing(req, res);
  });
}

function upgradeOf(request: FastifyRequest): Upgrade | undefined {
  return (request.raw as IncomingMessage & { [UPGRADE]?: Upgrade })[UPGRADE];
}

/** What a relayed socket tells its owner (the bounds, the metrics). */
export interface SocketEvents {
  /** Both sides are open. */
  opened(): void;
  /** Told once; `wasOpen`: whether {@link opened} was told. */
  ended(reason: EndReason, wasOpen: boolean): void;
}

/** A relayed socket, as its owner ends it. */
export interface RelayedSocket {
  close(reason: 'session' | 'drain' | 'lifetime'): void;
}

/** The part of a live request a socket needs (see `LiveRequest` in `index.ts`). */
export interface SocketRequest {
  readonly request: FastifyRequest;
  readonly reply: FastifyReply;
  readonly secrets: readonly string[];
  readonly path: string;
  readonly rawQuery: string;
  readonly upstreamHeaders: Readonly<Record<string, string>>;
}

const ORIGIN_REFUSED: ProxyAnswer = {
  status: 403,
  body: envelope('csrf_rejected', 'This origin may not open a WebSocket'),
  contentType: JSON_CONTENT_TYPE,
};
const NOT_AN_UPGRADE: ProxyAnswer = {
  status: 400,
  body: envelope('invalid_request', 'A WebSocket must be opened with an upgrade request'),
  contentType: JSON_CONTENT_TYPE,
};

/** See the module documentation. */
export class WebSocketRelay {
  readonly #server = new WebSocketServer({
    noServer: true,
    maxPayload: WS_LIMITS.clientMessageBytes,
    perMessageDeflate: false,
    clientTracking: false,
  });
  readonly #config: Pick<Config, 'allowedOrigins' | 'upstreamTimeoutMs'>;
  readonly #log: FastifyBaseLogger;
  readonly #sockets = new Set<{ client: WebSocket | undefined; upstream: WebSocket }>();
  readonly #pingIntervalMs: number;

  /** @param pingIntervalMs - time between the pings to each peer, in milliseconds (default {@link WS_LIMITS}`.pingIntervalMs`). */
  constructor(
    config: Pick<Config, 'allowedOrigins' | 'upstreamTimeoutMs'>,
    log: FastifyBaseLogger,
    pingIntervalMs: number = WS_LIMITS.pingIntervalMs,
  ) {
    this.#config = config;
    this.#log = log;
    this.#pingIntervalMs = pingIntervalMs;
  }

  /** The answer that refuses a handshake before anything is taken or opened (origin, not an upgrade), else `undefined`. */
  refusal(request: FastifyRequest): ProxyAnswer | undefined {
    if (upgradeOf(request) === undefined) return NOT_AN_UPGRADE;
    const origin = request.headers.origin;
    if (request.headers['sec-fetch-site'] === 'cross-site') return ORIGIN_REFUSED;
    if (origin !== undefined && !originAllowed(origin, request, this.#config.allowedOrigins)) return ORIGIN_REFUSED;
    return undefined;
  }

  /**
   * Opens the upstream socket, then upgrades the browser's and relays between them. An upstream that
   * refuses or fails before it opens is answered to the browser as HTTP (`events.ended` told).
   */
  relay(live: SocketRequest, baseUrl: string, events: SocketEvents): { socket: RelayedSocket; answer: Promise<ProxyAnswer | undefined> } {
    const upgrade = upgradeOf(live.request) as Upgrade;
    const url = new URL(baseUrl);
    url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
    const target = `${url.origin}${url.pathname.replace(/\/+$/, '')}${live.path}${live.rawQuery}`;
    const protocols = String(live.request.headers['sec-websocket-protocol'] ?? '')
      .split(',')
      .map((p) => p.trim())
      .filter((p) => p !== '');
    const headers: Record<string, string> = { ...live.upstreamHeaders };
    const origin = live.request.headers.origin;
    if (origin !== undefined) headers.origin = origin;
    const upstream = new WebSocket(target, protocols, {
      headers,
      handshakeTimeout: this.#config.upstreamTimeoutMs,
      maxPayload: WS_LIMITS.upstreamMessageBytes,
      perMessageDeflate: false,
      followRedirects: false,
    });
    const pair: { client: WebSocket | undefined; upstream: WebSocket } = { client: undefined, upstream };
    this.#sockets.add(pair);
    let ended = false;
    let open = false;
    let pending: EndReason | undefined;
    const end = (reason: EndReason) => {
      if (ended) return;
      ended = true;
      this.#sockets.delete(pair);
      clearInterval(pings);
      events.ended(reason, open);
    };
    const closeBoth = (reason: EndReason, code: number, text: string) => {
      end(reason);
      for (const socket of [pair.client, upstream]) {
        if (socket === undefined) continue;
        if (socket.readyState === WebSocket.OPEN) socket.close(code, text);
        else if (socket.readyState === WebSocket.CONNECTING) socket.terminate();
        setTimeout(() => socket.terminate(), WS_LIMITS.closeGraceMs).unref();
      }
    };
    const handle: RelayedSocket = {
      close: (reason) => {
        if (!open) {
          pending = reason;
          upstream.terminate();
          return;
        }
        const { code, reason: text } = WS_CLOSE[reason];
        closeBoth(reason === 'lifetime' ? 'lifetime' : reason, code, text);
      },
    };
    const alive = new WeakMap<WebSocket, boolean>();
    const pings = setInterval(() => {
      for (const socket of [pair.client, upstream]) {
        if (socket === undefined || socket.readyState !== WebSocket.OPEN) continue;
        if (alive.get(socket) === false) {
          closeBoth(socket === upstream ? 'upstream' : 'client', WS_CLOSE.dead_peer.code, WS_CLOSE.dead_peer.reason);
          socket.terminate();
          return;
        }
        alive.set(socket, false);
        socket.ping();
      }
    }, this.#pingIntervalMs);
    pings.unref();

    const answer = new Promise<ProxyAnswer | undefined>((resolve) => {
      upstream.once('unexpected-response', (_req, res) => {
        void readSome(res).then((body) => {
          end('upstream');
          upstream.terminate();
          resolve(upstreamFailureAnswer({ status: res.statusCode ?? 502, headers: res.headers, body }));
        });
      });
      upstream.once('error', (error: Error) => {
        if (open) return;
        end(pending ?? 'upstream');
        const timeout = /timed out/i.test(error.message);
        resolve(
          timeout
            ? { status: 504, body: envelope('upstream_timeout', 'The service did not answer in time'), contentType: JSON_CONTENT_TYPE }
            : { status: 502, body: envelope('upstream_unavailable', 'The service could not be reached'), contentType: JSON_CONTENT_TYPE },
        );
      });
      upstream.once('open', () => {
        if (ended || upgrade.socket.destroyed) {
          end(pending ?? 'client');
          upstream.terminate();
          live.reply.hijack();
          upgrade.socket.destroy();
          resolve(undefined);
          return;
        }
        live.reply.hijack();
        const chosen = upstream.protocol;
        const server =
          chosen === ''
            ? this.#server
            : new WebSocketServer({
                noServer: true,
                maxPayload: WS_LIMITS.clientMessageBytes,
                perMessageDeflate: false,
                clientTracking: false,
                handleProtocols: () => chosen,
              });
        server.handleUpgrade(live.request.raw, upgrade.socket, upgrade.head, (client) => {
          pair.client = client;
          open = true;
          events.opened();
          this.#bridge(client, upstream, live.secrets, closeBoth, alive);
          if (pending !== undefined) handle.close(pending as 'session' | 'drain' | 'lifetime');
        });
        resolve(undefined);
      });
    });
    return { socket: handle, answer };
  }

  /** Relays messages both ways with the limits of {@link WS_LIMITS}. */
  #bridge(
    client: WebSocket,
    upstream: WebSocket,
    secrets: readonly string[],
    closeBoth: (reason: EndReason, code: number, text: string) => void,
    alive: WeakMap<WebSocket, boolean>,
  ): void {
    let tokens: number = WS_LIMITS.clientMessageBurst;
    let filledAt = performance.now();
    client.on('pong', () => alive.set(client, true));
    upstream.on('pong', () => alive.set(upstream, true));
    client.on('message', (data: RawData, isBinary: boolean) => {
      const now = performance.now();
      tokens = Math.min(WS_LIMITS.clientMessageBurst, tokens + ((now - filledAt) / 1000) * WS_LIMITS.clientMessagesPerSecond);
      filledAt = now;
      if (tokens < 1) return closeBoth('client', WS_CLOSE.rate_limited.code, WS_CLOSE.rate_limited.reason);
      tokens -= 1;
      if (upstream.bufferedAmount > WS_LIMITS.bufferBytes)
        return closeBoth('slow_consumer', WS_CLOSE.slow_consumer.code, WS_CLOSE.slow_consumer.reason);
      upstream.send(data as Buffer, { binary: isBinary });
    });
    upstream.on('message', (data: RawData, isBinary: boolean) => {
      if (client.bufferedAmount > WS_LIMITS.bufferBytes)
        return closeBoth('slow_consumer', WS_CLOSE.slow_consumer.code, WS_CLOSE.slow_consumer.reason);
      const bytes = data as Buffer;
      if (secrets.length === 0) return client.send(bytes, { binary: isBinary });
      if (isBinary) return client.send(redactBody(bytes, secrets), { binary: true });
      client.send(redactText(bytes.toString('utf8'), secrets));
    });
    client.once('close', (code: number, reason: Buffer) => {
      closeBoth('client', sendable(code), reason.toString('utf8').slice(0, 120));
    });
    upstream.once('close', (code: number, reason: Buffer) => {
      closeBoth('upstream', sendable(code), reason.toString('utf8').slice(0, 120));
    });
    client.on('error', (error: Error) => {
      // A browser's message over the size limit, a broken frame: `ws` closes with the right code (1009, 1002).
      this.#log.debug({ err: error }, 'websocket: browser side failed');
    });
    upstream.on('error', (error: Error) => {
      this.#log.debug({ err: error }, 'websocket: upstream side failed');
    });
  }

  /** Resolves once every relayed socket closed, at most `graceMs` later (the rest are destroyed then). */
  async closed(graceMs: number): Promise<void> {
    const deadline = performance.now() + graceMs;
    while (this.#sockets.size > 0 && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    for (const pair of this.#sockets) {
      pair.client?.terminate();
      pair.upstream.terminate();
    }
  }
}

/** A close code one may send on (RFC 6455 §7.4.1: 1005, 1006 and 1015 are never sent): else 1011, or 1000 for none. */
function sendable(code: number): number {
  if (code === 1005) return 1000;
  if (code === 1006 || code === 1015 || code < 1000 || code >= 5000 || (code >= 1016 && code < 3000)) return 1011;
  return code;
}
