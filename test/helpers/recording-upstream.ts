/**
 * Test helpers: a recording upstream on a loopback port (every request it receives is kept: method,
 * path, query, headers, body) and a proxy started in front of it, both over real sockets; and
 * {@link useProxyWithRecorder}, which gives a test file both for its whole run.
 */
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { after, before, beforeEach } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { createServer, type ServerOptions } from '../../src/app.js';

/** One request as the upstream received it. */
export interface Recorded {
  method: string;
  /** Path without the query string. */
  path: string;
  /** The raw query string without `?` ('' when none). */
  query: string;
  headers: IncomingMessage['headers'];
  /** The body as text. */
  body: string;
  /** The body parsed as JSON, when it is JSON. */
  json: unknown;
}

/** How the recording upstream answers: a status and a JSON body (or raw text), or a custom function. */
export type UpstreamReply =
  | { status?: number; json?: unknown; text?: string; headers?: Record<string, string>; delayMs?: number }
  | ((req: Recorded, res: ServerResponse) => void);

export interface RecordingUpstream {
  url: string;
  requests: Recorded[];
  /** Sets the answer for requests whose path (without query) matches `path` (exact string or RegExp). */
  on(method: string, path: string | RegExp, reply: UpstreamReply): void;
  /** Default answer for everything else (initially 200 `{ ok: true, echo: { method, path } }`). */
  setDefault(reply: UpstreamReply): void;
  reset(): void;
  close(): Promise<void>;
}

/** Starts a recording upstream on 127.0.0.1 and a free port. */
export async function startRecordingUpstream(): Promise<RecordingUpstream> {
  const requests: Recorded[] = [];
  let routes: { method: string; path: string | RegExp; reply: UpstreamReply }[] = [];
  let fallback: UpstreamReply | undefined;
  const server = createHttpServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const [path = '', query = ''] = (req.url ?? '').split(/\?(.*)/s, 2);
      let json: unknown;
      try {
        json = body ? JSON.parse(body) : undefined;
      } catch {
        json = undefined;
      }
      const rec: Recorded = { method: req.method ?? '', path, query, headers: req.headers, body, json };
      requests.push(rec);
      const match = routes.find((r) => r.method === rec.method && (typeof r.path === 'string' ? r.path === path : r.path.test(path)));
      const reply = match?.reply ?? fallback ?? { status: 200, json: { ok: true, echo: { method: rec.method, path } } };
      if (typeof reply === 'function') {
        reply(rec, res);
        return;
      }
      const send = () => {
        const payload = reply.text ?? JSON.stringify(reply.json ?? { ok: true });
        res.writeHead(reply.status ?? 200, {
          'content-type': reply.text !== undefined ? 'text/plain' : 'application/json',
          ...reply.headers,
        });
        res.end(payload);
      };
      if (reply.delayMs) setTimeout(send, reply.delayMs);
      else send();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    on(method, path, reply) {
      routes.unshift({ method, path, reply });
    },
    setDefault(reply) {
      fallback = reply;
    },
    reset() {
      requests.length = 0;
      routes = [];
      fallback = undefined;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Captures log lines (one JSON object per line). */
export class LogCapture extends Writable {
  readonly lines: string[] = [];
  override _write(chunk: Buffer, _enc: BufferEncoding, done: () => void): void {
    for (const line of chunk.toString('utf8').split('\n')) if (line) this.lines.push(line);
    done();
  }
  /** The parsed entries. */
  get entries(): Record<string, unknown>[] {
    return this.lines.map((l) => JSON.parse(l) as Record<string, unknown>);
  }
}

export interface TestProxy {
  app: FastifyInstance;
  url: string;
  logs: LogCapture;
  close(): Promise<void>;
}

/**
 * Starts the proxy on 127.0.0.1:0 with every upstream pointing at `upstreamUrl` (the BFF at its root,
 * the other services under `/sticker`, `/referral-v1`, `/referral-v2`, `/ftd/verify`, `/ftd/send`,
 * `/attribution`, `/purge`), plus the given variables.
 */
export async function startProxy(upstreamUrl: string, env: Record<string, string> = {}, options: ServerOptions = {}): Promise<TestProxy> {
  const logs = new LogCapture();
  const app = await createServer(
    {
      NODE_ENV: 'test',
      LOG_LEVEL: 'info',
      BFF_BASE_URL: upstreamUrl,
      STICKER_API_URL: `${upstreamUrl}/sticker`,
      REFERRAL_V1_API_URL: `${upstreamUrl}/referral-v1`,
      REFERRAL_V2_API_URL: `${upstreamUrl}/referral-v2`,
      FTD_CASHBACK_VERIFY_URL: `${upstreamUrl}/ftd/verify`,
      FTD_CASHBACK_SEND_URL: `${upstreamUrl}/ftd/send`,
      ATTRIBUTION_S2S_URL: `${upstreamUrl}/attribution`,
      CACHE_PURGE_URL: `${upstreamUrl}/purge`,
      // Route tests send many requests from one address: the limits are tested where a test sets them.
      RATE_LIMIT_PREAUTH_PER_MIN: '0',
      RATE_LIMIT_LOGIN_FAILURES: '0',
      RATE_LIMIT_BEACON_PER_MIN: '0',
      RATE_LIMIT_API_PER_MIN: '0',
      // The proxy shares the test's process, whose event loop a loaded machine or a test's own work
      // delays: load shedding is tested where a test sets its thresholds.
      LOAD_SHED_EVENT_LOOP_DELAY_MS: '0',
      RATE_LIMIT_API_PER_ADDRESS_PER_MIN: '0',
      ...env,
    },
    { logStream: logs, ...options },
  );
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  return { app, url, logs, close: () => app.close() };
}

/** The variables and server options of one proxy started by {@link useProxiesWithRecorder}. */
export interface ProxySetup {
  env?: Record<string, string>;
  options?: ServerOptions;
}

/**
 * A recording upstream and one proxy per {@link ProxySetup} in front of it, for a whole test file:
 * registers node:test hooks that start them all `before` the tests, close the proxies and then the
 * upstream `after` them, and reset the upstream (requests and answers) `beforeEach` test. A file's own
 * `beforeEach` hooks, registered after this call, run after the reset.
 *
 * The returned objects can be destructured at once: their members read the started instances, and
 * throw when used before the `before` hook has run.
 *
 * @example
 * const { upstream, proxies: [dev, prod] } = useProxiesWithRecorder([
 *   { env: { NODE_ENV: 'development' } },
 *   { env: { NODE_ENV: 'production' } },
 * ]);
 */
export function useProxiesWithRecorder<const S extends readonly ProxySetup[]>(
  setups: S,
): { upstream: RecordingUpstream; proxies: { [I in keyof S]: TestProxy } } {
  let started: { upstream: RecordingUpstream; proxies: TestProxy[] } | undefined;
  const current = () => {
    if (!started) throw new Error('the recording upstream and the proxy start in the before hook');
    return started;
  };
  before(async () => {
    started = { upstream: await startRecordingUpstream(), proxies: [] };
    for (const { env, options } of setups) started.proxies.push(await startProxy(started.upstream.url, env, options));
  });
  after(async () => {
    if (!started) return;
    for (const proxy of started.proxies) await proxy.close();
    await started.upstream.close();
  });
  beforeEach(() => current().upstream.reset());

  const upstream: RecordingUpstream = {
    get url() {
      return current().upstream.url;
    },
    get requests() {
      return current().upstream.requests;
    },
    on: (method, path, reply) => current().upstream.on(method, path, reply),
    setDefault: (reply) => current().upstream.setDefault(reply),
    reset: () => current().upstream.reset(),
    close: () => current().upstream.close(),
  };
  const proxy = (index: number): TestProxy => {
    const get = () => current().proxies[index] as TestProxy;
    return {
      get app() {
        return get().app;
      },
      get url() {
        return get().url;
      },
      get logs() {
        return get().logs;
      },
      close: () => get().close(),
    };
  };
  return { upstream, proxies: setups.map((_, i) => proxy(i)) as { [I in keyof S]: TestProxy } };
}

/**
 * {@link useProxiesWithRecorder} with one proxy, started with `env` and `options` as {@link startProxy}
 * takes them.
 *
 * @example
 * const { upstream, proxy } = useProxyWithRecorder({ UPSTREAM_TIMEOUT_MS: '2000' });
 * test('forwards', async () => {
 *   await send(proxy.url, 'GET', '/api/games/list');
 *   assert.equal(upstream.requests.length, 1);
 * });
 */
export function useProxyWithRecorder(
  env: Record<string, string> = {},
  options: ServerOptions = {},
): { upstream: RecordingUpstream; proxy: TestProxy } {
  const {
    upstream,
    proxies: [proxy],
  } = useProxiesWithRecorder([{ env, options }]);
  return { upstream, proxy };
}

/** A fake JWT with a readable payload (the proxy never verifies it; the BFF does). */
export function fakeJwt(claims: Record<string, unknown> = {}): string {
  const enc = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const exp = Math.floor(Date.now() / 1000) + 3600;
  return `${enc({ alg: 'HS256', typ: 'JWT' })}.${enc({ sub: '1', exp, ...claims })}.c2lnbmF0dXJl${Math.random().toString(36).slice(2)}`;
}

/** How long {@link send} waits for a whole answer by default, in milliseconds. */
export const SEND_DEADLINE_MS = 60_000;

/**
 * Sends a request to the proxy and returns status, headers, text and parsed JSON.
 * @throws the fetch's `TimeoutError` when no whole answer came within `deadlineMs`
 * ({@link SEND_DEADLINE_MS} by default): a test never waits on a request for ever.
 */
export async function send(
  base: string,
  method: string,
  path: string,
  options: {
    json?: unknown;
    body?: string;
    headers?: Record<string, string>;
    token?: string;
    cookieName?: string;
    deadlineMs?: number;
  } = {},
): Promise<{ status: number; headers: Headers; text: string; json: unknown }> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) {
    const name = options.cookieName ?? 'access_token';
    headers.cookie = headers.cookie ? `${headers.cookie}; ${name}=${options.token}` : `${name}=${options.token}`;
  }
  let body: string | undefined = options.body;
  if (options.json !== undefined) {
    body = JSON.stringify(options.json);
    headers['content-type'] ??= 'application/json';
  }
  const signal = AbortSignal.timeout(options.deadlineMs ?? SEND_DEADLINE_MS);
  const res = await fetch(`${base}${path}`, { method, headers, body, redirect: 'manual', signal });
  const text = await res.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

/**
 * Proves that upstream calls run at the same time without timing them: each reply made by
 * {@link ConcurrencyBarrier.reply} is held until `expected` calls are in flight together (or a
 * fallback delay passes, so that a sequential caller still finishes); `maxInFlight` tells how many
 * were in flight at once.
 */
export class ConcurrencyBarrier {
  #inFlight = 0;
  #max = 0;
  readonly #held: (() => void)[] = [];
  readonly #expected: number;
  readonly #fallbackMs: number;
  constructor(expected: number, fallbackMs = 2_000) {
    this.#expected = expected;
    this.#fallbackMs = fallbackMs;
  }
  /** Most calls seen in flight at once. */
  get maxInFlight(): number {
    return this.#max;
  }
  /** A reply that answers `json` with `status` once the barrier opens. */
  reply(json: unknown, status = 200): UpstreamReply {
    return (_req, res) => {
      this.#inFlight++;
      this.#max = Math.max(this.#max, this.#inFlight);
      const release = () => {
        this.#inFlight--;
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(json));
      };
      this.#held.push(release);
      if (this.#held.length >= this.#expected) {
        for (const open of this.#held.splice(0)) open();
        return;
      }
      setTimeout(() => {
        const i = this.#held.indexOf(release);
        if (i >= 0) this.#held.splice(i, 1)[0]?.();
      }, this.#fallbackMs);
    };
  }
}
