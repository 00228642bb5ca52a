/**
 * Upstreams for the hardening rows, on loopback ports:
 *
 * - {@link startFaultUpstream}: answers like a healthy BFF (a valid profile on `/auth/user-profile`,
 *   `{ ok: true }` elsewhere) and keeps a light record of every request (method, raw path, query,
 *   request id, a few headers); a fault can be set for a path prefix, from the {@link FAULTS} catalogue.
 * - {@link startCanary}: a second host that only counts what reaches it (SSRF and redirect checks).
 * - {@link closedPort}: a port nothing listens on (connection refused).
 */
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createNetServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

/** What the fault upstream keeps of one request. */
export interface Seen {
  method: string;
  /** The raw request target up to `?`, as received. */
  path: string;
  /** The raw query without `?`. */
  query: string;
  /** `x-request-id` as forwarded by the proxy. */
  rid: string;
  headers: IncomingMessage['headers'];
  /** The raw header lines as received (duplicates kept). */
  rawHeaders: string[];
  bodyLength: number;
  /** The body as text (kept only when `keepBodies` is set, at most 64 KiB). */
  body: string;
}

export type Handler = (req: IncomingMessage, res: ServerResponse, seen: Seen) => void;

/** The session user of every good profile answer. */
export const PROFILE_USER_ID = 7;
export const GOOD_PROFILE = {
  user: { id: PROFILE_USER_ID, email: 'hardening@example.com', name: 'Hardening', currency: 'BRL', country: 'BR' },
  userInfo: { login_at: '2026-01-01', two_factor_enabled: false },
};

/** What the sticker API's handshake (`POST /auth/token`) answers. */
export const GOOD_HANDSHAKE = { access_token: 'sticker-handshake-0123456789', expires_in: 3600 };

/**
 * The healthy answer: a profile for `/auth/user-profile`, a handshake token for the sticker API's
 * `/sticker/auth/token`, `{ ok: true }` otherwise.
 */
export const good: Handler = (_req, res, seen) => {
  const body = seen.path.endsWith('/auth/user-profile')
    ? GOOD_PROFILE
    : seen.path === '/sticker/auth/token'
      ? GOOD_HANDSHAKE
      : { ok: true, data: [], id: 'x1' };
  const text = JSON.stringify(body);
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
};

function raw(res: ServerResponse, bytes: string | Buffer, then: 'end' | 'keep' | 'reset' = 'end'): void {
  const socket = res.socket as Socket;
  socket.write(bytes);
  if (then === 'end') socket.end();
  else if (then === 'reset') socket.resetAndDestroy();
}

/** A 64 KiB reason: an upstream address, a stack, a canary-like token, markup and control characters. */
export function adversarialReason(canary: string): string {
  const unit = `http://10.0.0.7:8080/internal?token=${canary} at Object.<anonymous> (/srv/bff/app.js:12:7) <script>x</script> \u202e `;
  return unit.repeat(Math.ceil(65_536 / unit.length)).slice(0, 65_536);
}

/**
 * The faults of row 5, by name. `canaryUrl` is where the redirect points; `canary` is the token
 * planted in adversarial answers.
 */
export function faultCatalogue(canaryUrl: string, canary: string): Record<string, Handler> {
  return {
    'accept-then-silence': () => {
      // never answers
    },
    'stall-mid-body': (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
      res.write('{"ok":true,"pad":"');
    },
    'reset-after-headers': (_req, res) => {
      raw(res, 'HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 50\r\n\r\n', 'reset');
    },
    'short-content-length': (_req, res) => {
      raw(res, 'HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"ok":true}');
    },
    'status-888': (_req, res) => {
      raw(res, 'HTTP/1.1 888 Weird\r\ncontent-type: application/json\r\ncontent-length: 11\r\n\r\n{"ok":true}');
    },
    'status-600': (_req, res) => {
      raw(res, 'HTTP/1.1 600 Beyond\r\ncontent-type: application/json\r\ncontent-length: 11\r\n\r\n{"ok":true}');
    },
    'status-1xx-then-silence': (_req, res) => {
      raw(res, 'HTTP/1.1 102 Processing\r\n\r\n', 'keep');
    },
    'status-101-switch': (_req, res) => {
      raw(res, 'HTTP/1.1 101 Switching Protocols\r\nconnection: upgrade\r\nupgrade: evil\r\n\r\n', 'keep');
    },
    'html-labelled-json': (_req, res) => {
      const html = '<!DOCTYPE html><html><body><h1>502 Bad Gateway</h1><p>nginx at 10.0.0.7</p></body></html>';
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(html) });
      res.end(html);
    },
    'body-10mb': (_req, res) => {
      const chunk = Buffer.alloc(64 * 1024, 0x61);
      const total = 10 * 1024 * 1024;
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(total) });
      let sent = 0;
      const pump = () => {
        while (sent < total) {
          sent += chunk.length;
          if (!res.write(chunk)) {
            res.once('drain', pump);
            return;
          }
        }
        res.end();
      };
      res.on('error', () => undefined);
      pump();
    },
    'endless-chunked': (_req, res) => {
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('[');
      let stopped = false;
      res.on('close', () => {
        stopped = true;
      });
      res.on('error', () => undefined);
      const pump = () => {
        // bounded: at most 64 MiB, in case nothing reads it
        for (let i = 0; i < 1024 && !stopped; i++) {
          if (!res.write(chunk)) {
            res.once('drain', pump);
            return;
          }
        }
        if (!stopped) res.end(']');
      };
      pump();
    },
    'redirect-302-to-canary': (_req, res) => {
      res.writeHead(302, { location: `${canaryUrl}/stolen`, 'content-length': '0' });
      res.end();
    },
    'reason-64k-status-line': (_req, res) => {
      raw(res, `HTTP/1.1 503 ${adversarialReason(canary)}\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}`);
    },
    'reason-64k-json-body': (_req, res) => {
      const body = JSON.stringify({
        reason: adversarialReason(canary),
        message: adversarialReason(canary),
        stack: `Error: boom\n    at handler (/srv/bff/app.js:1:1)\n    at ${canaryUrl}`,
      });
      res.writeHead(503, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    },
  };
}

export interface FaultUpstream {
  url: string;
  port: number;
  seen: Seen[];
  /** Requests received per `x-request-id`. */
  byRid: Map<string, Seen[]>;
  /** Sets the answer for paths starting with `prefix` (or for every path with `''`); later calls win. */
  fault(prefix: string, handler: Handler): void;
  /** Back to healthy answers everywhere. */
  heal(): void;
  /** Forgets what was seen. */
  clearSeen(): void;
  /** Sockets currently open to this upstream. */
  readonly openSockets: number;
  /** Requests received since the start (also when `keepSeen` is false). */
  readonly total: number;
  close(): Promise<void>;
}

/**
 * Starts the fault upstream. `keepSeen` = false keeps only counts (for the 100,000-request churn);
 * `keepBodies` keeps request bodies (row 6).
 */
export async function startFaultUpstream(
  options: { keepSeen?: boolean; keepBodies?: boolean; port?: number } = {},
): Promise<FaultUpstream> {
  const keepSeen = options.keepSeen ?? true;
  const seen: Seen[] = [];
  const byRid = new Map<string, Seen[]>();
  let rules: { prefix: string; handler: Handler }[] = [];
  const sockets = new Set<Socket>();
  let count = 0;
  const server: Server = createHttpServer({ maxHeaderSize: 64 * 1024 }, (req, res) => {
    const target = req.url ?? '';
    const q = target.indexOf('?');
    const record: Seen = {
      method: req.method ?? '',
      path: q < 0 ? target : target.slice(0, q),
      query: q < 0 ? '' : target.slice(q + 1),
      rid: String(req.headers['x-request-id'] ?? ''),
      headers: req.headers,
      rawHeaders: req.rawHeaders,
      bodyLength: 0,
      body: '',
    };
    count++;
    if (keepSeen) {
      seen.push(record);
      const list = byRid.get(record.rid);
      if (list) list.push(record);
      else byRid.set(record.rid, [record]);
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => {
      record.bodyLength += c.length;
      if (options.keepBodies && record.bodyLength <= 65_536) chunks.push(c);
    });
    req.on('error', () => undefined);
    req.on('end', () => {
      if (options.keepBodies) record.body = Buffer.concat(chunks).toString('utf8');
      const rule = rules.find((r) => record.path.startsWith(r.prefix));
      (rule?.handler ?? good)(req, res, record);
    });
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('clientError', (_error, socket) => socket.destroy());
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    seen,
    byRid,
    fault(prefix, handler) {
      rules.unshift({ prefix, handler });
    },
    heal() {
      rules = [];
    },
    clearSeen() {
      seen.length = 0;
      byRid.clear();
    },
    get openSockets() {
      return sockets.size;
    },
    get total() {
      return count;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A second loopback host that counts every connection and request reaching it. */
export interface Canary {
  url: string;
  host: string;
  port: number;
  readonly connections: number;
  readonly requests: number;
  close(): Promise<void>;
}

export async function startCanary(): Promise<Canary> {
  let connections = 0;
  let requests = 0;
  const server = createHttpServer((_req, res) => {
    requests++;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"canary":"reached"}');
  });
  server.on('connection', () => {
    connections++;
  });
  // 127.0.0.2 is a different host from the proxy's upstreams (loopback all the same).
  const host = await new Promise<string>((resolve) => {
    server.once('error', () => server.listen(0, '127.0.0.1', () => resolve('127.0.0.1')));
    server.listen(0, '127.0.0.2', () => resolve('127.0.0.2'));
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${port}`,
    host,
    port,
    get connections() {
      return connections;
    },
    get requests() {
      return requests;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A loopback port that was free a moment ago and has nothing listening on it. */
export async function closedPort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
