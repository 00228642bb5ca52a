/**
 * A fake upstream that writes its answers byte for byte on the socket (a `net` server, not
 * node:http): any framing, coding, header or reset a real BFF, load balancer, CDN or WAF may send
 * (docs/behaviour.md "Upstream answers"). Each request is read up to the end of its body (by
 * `Content-Length`), counted by method and path, and handed with its socket to the first rule whose
 * path prefix matches; unmatched paths answer a small JSON 200.
 */
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';

/** One request as the raw upstream read it. */
export interface RawSeen {
  method: string;
  /** The target without its query string. */
  path: string;
  /** The target as it came, query string included. */
  target: string;
  /** Lower-case header names, the last value of each. */
  headers: Record<string, string>;
  body: Buffer;
}

/** Writes an answer (or a fault) on `socket` for `req`; the socket is the rule's to end or keep. */
export type RawRule = (socket: Socket, req: RawSeen) => void;

export interface RawUpstream {
  url: string;
  /** Every request read, in order. */
  readonly seen: RawSeen[];
  /** Requests read whose path starts with `prefix`. */
  count(prefix: string, method?: string): number;
  /** Answers paths starting with `prefix` with `rule` (later rules win over earlier ones). */
  on(prefix: string, rule: RawRule): void;
  /** Forgets every rule and what was seen. */
  reset(): void;
  close(): Promise<void>;
}

/**
 * A whole HTTP/1.1 answer as bytes: status line, `headers` (written as given, in order), and
 * `body`; `Content-Length` is added from the body unless `headers` has its own framing
 * (`content-length` or `transfer-encoding`), or `length: false`.
 */
export function rawAnswer(
  status: number,
  headers: readonly [string, string][],
  body: Buffer | string = '',
  options: { length?: boolean } = {},
): Buffer {
  const bytes = typeof body === 'string' ? Buffer.from(body) : body;
  const lines = [`HTTP/1.1 ${status} ${status === 200 ? 'OK' : 'Status'}`];
  const framed = headers.some(([name]) => /^(content-length|transfer-encoding)$/i.test(name));
  for (const [name, value] of headers) lines.push(`${name}: ${value}`);
  if (!framed && options.length !== false) lines.push(`Content-Length: ${bytes.length}`);
  return Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), bytes]);
}

/** A rule that writes `bytes` and keeps the connection open for the next request. */
export function writes(bytes: Buffer): RawRule {
  return (socket) => socket.write(bytes);
}

const HEAD_END = Buffer.from('\r\n\r\n');

/** Starts the raw upstream on a free loopback port. */
export async function startRawUpstream(): Promise<RawUpstream> {
  const seen: RawSeen[] = [];
  let rules: { prefix: string; rule: RawRule }[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    let pending = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      for (;;) {
        const end = pending.indexOf(HEAD_END);
        if (end < 0) return;
        const head = pending.subarray(0, end).toString('latin1').split('\r\n');
        const headers: Record<string, string> = {};
        for (const line of head.slice(1)) {
          const colon = line.indexOf(':');
          if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
        }
        const length = Number(headers['content-length'] ?? 0);
        if (pending.length < end + 4 + length) return;
        const [method = '', target = ''] = (head[0] ?? '').split(' ');
        const q = target.indexOf('?');
        const req: RawSeen = {
          method,
          path: q < 0 ? target : target.slice(0, q),
          target,
          headers,
          body: pending.subarray(end + 4, end + 4 + length),
        };
        pending = pending.subarray(end + 4 + length);
        seen.push(req);
        const rule = rules.find((r) => req.path.startsWith(r.prefix))?.rule;
        if (rule) rule(socket, req);
        else socket.write(rawAnswer(200, [['Content-Type', 'application/json']], '{"ok":true}'));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    count: (prefix, method) => seen.filter((s) => s.path.startsWith(prefix) && (method === undefined || s.method === method)).length,
    on(prefix, rule) {
      rules.unshift({ prefix, rule });
    },
    reset() {
      rules = [];
      seen.length = 0;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
