/**
 * Helpers of the live-stream tests (docs/behaviour.md "Live streams"): an upstream whose event streams
 * the test writes by hand, and an event-stream client that keeps what arrived and when the stream ended.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, request as httpRequest, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** One stream the upstream holds open: the request that opened it and its answer to write to. */
export interface UpstreamStreamCall {
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly res: ServerResponse;
  /** Resolves when the proxy closed (or the test ended) the answer. */
  readonly closed: Promise<void>;
}

export type StreamAnswerKind = { kind: 'stream' } | { kind: 'status'; status: number; body: unknown } | { kind: 'silent' };

/** An upstream that answers every `GET` under `/core-sportbook/` with a held event stream (or what `answer` says). */
export interface StreamUpstream {
  readonly url: string;
  readonly calls: UpstreamStreamCall[];
  /** How the next calls are answered: `stream` (200 `text/event-stream`, held), a status and JSON body, or no answer at all. */
  answer: StreamAnswerKind;
  /** How a call to a path is answered when it is not {@link answer}'s (ordinary reads beside the streams). */
  byPath: Map<string, StreamAnswerKind>;
  /** Resolves with the `n`-th call (1-based) once it arrived. */
  call(n: number, timeoutMs?: number): Promise<UpstreamStreamCall>;
  close(): Promise<void>;
}

export async function startStreamUpstream(): Promise<StreamUpstream> {
  const calls: UpstreamStreamCall[] = [];
  const waiters: (() => void)[] = [];
  const sockets = new Set<Socket>();
  const upstream: StreamUpstream = {
    url: '',
    calls,
    answer: { kind: 'stream' },
    byPath: new Map(),
    async call(n, timeoutMs = 5_000) {
      const deadline = Date.now() + timeoutMs;
      while (calls.length < n) {
        if (Date.now() > deadline) throw new Error(`upstream call ${n} did not come (got ${calls.length})`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 50);
        });
      }
      return calls[n - 1] as UpstreamStreamCall;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const answer = upstream.byPath.get((req.url ?? '').split('?')[0] as string) ?? upstream.answer;
    if (answer.kind === 'status') {
      res.writeHead(answer.status, { 'content-type': 'application/json' }).end(JSON.stringify(answer.body));
      return;
    }
    const closed = new Promise<void>((resolve) => res.once('close', () => resolve()));
    calls.push({ path: req.url ?? '', headers: req.headers, res, closed });
    for (const wake of waiters.splice(0)) wake();
    if (answer.kind === 'stream') res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8' }).flushHeaders();
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  (upstream as { url: string }).url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return upstream;
}

/** An event stream read through the proxy. */
export interface SseReader {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  /** Every byte received so far, as text. */
  text(): string;
  /** The whole events received so far (their `data` lines joined), proxy comments left out. */
  data(): string[];
  /** Resolves once `n` events with data arrived. */
  events(n: number, timeoutMs?: number): Promise<string[]>;
  /** Resolves when the stream ended: `clean` (the answer's last chunk came) or `cut`. */
  readonly ended: Promise<'clean' | 'cut'>;
  close(): void;
}

/** Opens `path` on the proxy with `Accept: text/event-stream` (plus `headers`; a header given as `undefined` is not sent, `Accept` included). */
export function openSse(base: string, path: string, headers: Record<string, string | undefined> = {}): Promise<SseReader> {
  const sent = Object.fromEntries(
    Object.entries({ accept: 'text/event-stream', ...headers }).filter(([, value]) => value !== undefined),
  ) as Record<string, string>;
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${base}${path}`, { headers: sent }, (res) => {
      let text = '';
      let cleanEnd = false;
      const wake: (() => void)[] = [];
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        text += chunk;
        for (const w of wake.splice(0)) w();
      });
      res.once('end', () => {
        cleanEnd = true;
      });
      const ended = new Promise<'clean' | 'cut'>((done) => res.once('close', () => done(cleanEnd && res.complete ? 'clean' : 'cut')));
      const data = () =>
        text
          .split(/\n\n/)
          .slice(0, -1)
          .map((event) =>
            event
              .split('\n')
              .filter((line) => line.startsWith('data:'))
              .map((line) => line.slice(5).trimStart())
              .join('\n'),
          )
          .filter((d) => d !== '');
      resolve({
        status: res.statusCode ?? 0,
        headers: res.headers,
        text: () => text,
        data,
        ended,
        async events(n, timeoutMs = 5_000) {
          const deadline = Date.now() + timeoutMs;
          while (data().length < n) {
            if (Date.now() > deadline) throw new Error(`expected ${n} events, got ${data().length}: ${JSON.stringify(text.slice(-300))}`);
            await new Promise<void>((w) => {
              wake.push(w);
              setTimeout(w, 50);
            });
          }
          return data();
        },
        close: () => req.destroy(),
      });
    });
    req.once('error', reject);
    req.end();
  });
}
