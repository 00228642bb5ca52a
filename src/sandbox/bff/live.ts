/**
 * The live feeds of the sandbox sportsbook (docs/behaviour.md "Live streams"): odds that move, as
 * Server-Sent Events and as a WebSocket, on the paths a live front end opens through the raw
 * passthrough.
 *
 * | endpoint | answer |
 * |---|---|
 * | `GET /core-sportbook/live/odds` | `text/event-stream`: `id: <n>`, `event: odds`, `data: {"seq", "event_id", "odds", "at"}` every `interval` ms; a `Last-Event-ID` resumes after it |
 * | `GET /core-sportbook/live/bets` (session) | the same stream for the signed-in user, `data` with `user_id`; ends when the session is revoked or expires |
 * | the same paths with `Upgrade: websocket` | one text message per tick with the same `data`; a message sent to it comes back as `{"echo": …}` |
 *
 * Query parameters (the sandbox's own, to watch the proxy's limits against):
 *
 * | parameter | effect |
 * |---|---|
 * | `interval` | milliseconds between events, 5–60 000 (default 1 000) |
 * | `echo=1` | every event's `data` carries the `Authorization` header it was opened with (the proxy scrubs the token) |
 * | `fault=stall` | one event, then silence, the connection left open |
 * | `fault=drop` | one event and half of the next, then the connection is destroyed |
 * | `fault=garbage` | one event, then 512 KiB without a line end (no event stream) |
 * | `fault=burst` | `count` events (default 5 000, at most 100 000) of about 1 KiB at once, then one per `interval` |
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import WebSocket, { WebSocketServer } from 'ws';
import type { SandboxArea, SandboxContext } from '../context.js';
import { asRecord } from '../http.js';
import { authenticate, bearerToken, GUARD_BODIES } from './guard.js';

/** The live paths (below `/core-sportbook/live/`). */
export const LIVE_FEEDS = ['odds', 'bets'] as const;

/** The faults a live feed can play. */
export const LIVE_FAULTS = ['stall', 'drop', 'garbage', 'burst'] as const;
type LiveFault = (typeof LIVE_FAULTS)[number];

interface LiveOptions {
  readonly intervalMs: number;
  readonly echo: boolean;
  readonly fault: LiveFault | undefined;
  readonly count: number;
}

/** The options of a feed from its query (out-of-range values fall back to the defaults). */
export function liveOptions(query: Record<string, unknown>): LiveOptions {
  const number = (value: unknown, min: number, max: number, fallback: number) => {
    const n = Number(value);
    return Number.isInteger(n) && n >= min && n <= max ? n : fallback;
  };
  const fault = (LIVE_FAULTS as readonly unknown[]).includes(query.fault) ? (query.fault as LiveFault) : undefined;
  return {
    intervalMs: number(query.interval, 5, 60_000, 1_000),
    echo: query.echo === '1',
    fault,
    count: number(query.count, 1, 100_000, 5_000),
  };
}

/** The `data` of one tick: the event's odds moving with `seq`. */
export function liveData(seq: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const eventId = 50_001 + (seq % 12);
  const drift = ((seq * 37) % 41) / 100;
  return {
    seq,
    event_id: eventId,
    odds: { home: Number((1.5 + drift).toFixed(2)), draw: 3.1, away: Number((2.6 - drift / 2).toFixed(2)) },
    at: new Date().toISOString(),
    ...extra,
  };
}

/** One event of the stream, with its id. */
function sseEvent(seq: number, extra: Record<string, unknown>, pad = 0): string {
  const data = pad > 0 ? { ...liveData(seq, extra), pad: 'x'.repeat(pad) } : liveData(seq, extra);
  return `id: ${seq}\nevent: odds\ndata: ${JSON.stringify(data)}\n\n`;
}

/** Serves one event stream on `res` until its client leaves (or its fault ends it). */
function streamEvents(
  res: ServerResponse,
  options: LiveOptions,
  firstSeq: number,
  extra: Record<string, unknown>,
  stillValid: () => Promise<boolean>,
): void {
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
  let seq = firstSeq;
  const ticks: { timer?: NodeJS.Timeout } = {};
  const stop = () => clearInterval(ticks.timer);
  res.once('close', stop);
  res.write(sseEvent(seq++, extra));
  switch (options.fault) {
    case 'stall':
      return;
    case 'drop': {
      const half = sseEvent(seq, extra);
      res.write(half.slice(0, Math.floor(half.length / 2)));
      setTimeout(() => res.destroy(), 50);
      return;
    }
    case 'garbage':
      res.write('x'.repeat(512 * 1024));
      return;
    case 'burst':
      for (let i = 0; i < options.count && !res.destroyed; i++) res.write(sseEvent(seq++, extra, 900));
      break;
    default:
      break;
  }
  ticks.timer = setInterval(() => {
    void stillValid().then((valid) => {
      if (res.destroyed) return;
      if (!valid) {
        stop();
        res.end();
        return;
      }
      res.write(sseEvent(seq++, extra));
    });
  }, options.intervalMs);
}

/** The sequence number after a `Last-Event-ID`, or 1. */
function resumeFrom(header: string | string[] | undefined): number {
  const n = Number(header);
  return Number.isSafeInteger(n) && n >= 0 ? n + 1 : 1;
}

/** Answers a WebSocket upgrade on a live path of the BFF server (anything else is left to others). */
function websocketFeeds(ctx: SandboxContext): (req: IncomingMessage, socket: Duplex, head: Buffer) => void {
  const server = new WebSocketServer({ noServer: true, perMessageDeflate: false });
  return (req, socket, head) => {
    const url = new URL(req.url ?? '/', 'http://sandbox.invalid');
    const feed = /^\/core-sportbook\/live\/(odds|bets)$/.exec(url.pathname)?.[1];
    if (feed === undefined) {
      socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    const options = liveOptions(Object.fromEntries(url.searchParams));
    const header = req.headers.authorization;
    const accept = async (): Promise<boolean> => {
      if (feed === 'odds') return true;
      const token = typeof header === 'string' ? /^bearer\s+(\S+)$/i.exec(header)?.[1] : undefined;
      return token !== undefined && 'claims' in (await ctx.tokens.verify(token));
    };
    void accept().then((ok) => {
      if (!ok) {
        const body = JSON.stringify(GUARD_BODIES.no_token);
        socket.end(
          `HTTP/1.1 401 Unauthorized\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
        );
        return;
      }
      server.handleUpgrade(req, socket, head, (ws) => {
        const extra = options.echo && typeof header === 'string' ? { authorization: header } : {};
        let seq = 1;
        const send = () => ws.readyState === WebSocket.OPEN && ws.send(JSON.stringify(liveData(seq++, extra)));
        send();
        if (options.fault === 'stall') return;
        if (options.fault === 'garbage') {
          ws.send(Buffer.from([0xff, 0xfe, 0x00, 0x01]), { binary: true });
        }
        if (options.fault === 'burst')
          for (let i = 0; i < options.count; i++) ws.send(JSON.stringify({ ...liveData(seq++, extra), pad: 'x'.repeat(900) }));
        if (options.fault === 'drop') {
          (ws as unknown as { _socket: Duplex })._socket.destroy();
          return;
        }
        const timer = setInterval(send, options.intervalMs);
        ws.on('message', (data, isBinary) => {
          if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ echo: isBinary ? '(binary)' : data.toString() }));
        });
        ws.once('close', () => clearInterval(timer));
      });
    });
  };
}

/** The live area of the sandbox BFF. */
export const liveArea: SandboxArea = {
  name: 'live',
  register(app, ctx) {
    app.server.on('upgrade', websocketFeeds(ctx));
    app.get('/core-sportbook/live/odds', (request, reply) => {
      const options = liveOptions(asRecord(request.query));
      const extra = options.echo ? { authorization: request.headers.authorization ?? null } : {};
      reply.hijack();
      streamEvents(reply.raw, options, resumeFrom(request.headers['last-event-id']), extra, async () => true);
    });
    app.get('/core-sportbook/live/bets', async (request, reply) => {
      const first = await authenticate(request);
      if (typeof first === 'string') return reply.code(401).send(GUARD_BODIES[first]);
      const options = liveOptions(asRecord(request.query));
      const extra = { user_id: first.user.id, ...(options.echo ? { authorization: request.headers.authorization ?? null } : {}) };
      const token = bearerToken(request);
      reply.hijack();
      streamEvents(reply.raw, options, resumeFrom(request.headers['last-event-id']), extra, async () => {
        const again = await authenticate(request);
        return typeof again !== 'string' && bearerToken(request) === token;
      });
      return reply;
    });
  },
};
