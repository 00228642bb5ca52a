/**
 * Clients for the hardening rows. {@link rawRequest} sends the request target exactly as given
 * (node:http, no URL normalisation: `..`, `%2e`, `%00` reach the proxy as written); {@link rawSocket}
 * writes arbitrary bytes (CR/LF, malformed requests); {@link runPool} runs jobs with bounded concurrency.
 */
import { Agent, type IncomingHttpHeaders, request as httpRequest } from 'node:http';
import { connect } from 'node:net';

export interface RawAnswer {
  /** The status, or 0 when the connection failed or was cut before an answer. */
  status: number;
  headers: IncomingHttpHeaders;
  rawHeaders: string[];
  body: Buffer;
  /** Milliseconds from sending to the end of the answer (or the failure). */
  ms: number;
  /** The error code when no complete answer came (`ECONNRESET`, `ECONNREFUSED`, `timeout`, `aborted`…). */
  error?: string;
}

export interface RawRequestOptions {
  method: string;
  /** The request target, sent as is. */
  path: string;
  headers?: Record<string, string | string[]>;
  body?: string | Buffer;
  /** Give up after this many milliseconds (default 15 s). */
  timeoutMs?: number;
  agent?: Agent | false;
}

/** A keep-alive agent for many small requests. */
export function keepAliveAgent(maxSockets = 16): Agent {
  return new Agent({ keepAlive: true, maxSockets, maxFreeSockets: maxSockets });
}

/** Sends one request over node:http with the request target untouched. */
export function rawRequest(base: string, options: RawRequestOptions): Promise<RawAnswer> {
  const url = new URL(base);
  const started = performance.now();
  return new Promise<RawAnswer>((resolve) => {
    let done = false;
    const finish = (answer: Omit<RawAnswer, 'ms'>) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve({ ...answer, ms: performance.now() - started });
    };
    const headers: Record<string, string | string[]> = { ...options.headers };
    const body = options.body === undefined ? undefined : Buffer.isBuffer(options.body) ? options.body : Buffer.from(options.body);
    if (body !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-length')) {
      headers['content-length'] = String(body.length);
    }
    let req: ReturnType<typeof httpRequest>;
    try {
      req = httpRequest({
        host: url.hostname,
        port: url.port,
        method: options.method,
        path: options.path,
        headers,
        agent: options.agent ?? false,
        insecureHTTPParser: true,
      });
    } catch (error) {
      resolve({
        status: -1,
        headers: {},
        rawHeaders: [],
        body: Buffer.alloc(0),
        ms: 0,
        error: (error as { code?: string }).code ?? 'invalid',
      });
      return;
    }
    const timer = setTimeout(() => {
      req.destroy();
      finish({ status: 0, headers: {}, rawHeaders: [], body: Buffer.alloc(0), error: 'timeout' });
    }, options.timeoutMs ?? 15_000);
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        finish({ status: res.statusCode ?? 0, headers: res.headers, rawHeaders: res.rawHeaders, body: Buffer.concat(chunks) }),
      );
      res.on('aborted', () =>
        finish({
          status: res.statusCode ?? 0,
          headers: res.headers,
          rawHeaders: res.rawHeaders,
          body: Buffer.concat(chunks),
          error: 'aborted',
        }),
      );
      res.on('error', (error: NodeJS.ErrnoException) =>
        finish({
          status: res.statusCode ?? 0,
          headers: res.headers,
          rawHeaders: res.rawHeaders,
          body: Buffer.concat(chunks),
          error: error.code ?? 'aborted',
        }),
      );
    });
    req.on('error', (error: NodeJS.ErrnoException) =>
      finish({ status: 0, headers: {}, rawHeaders: [], body: Buffer.alloc(0), error: error.code ?? error.message }),
    );
    req.end(body);
  });
}

/** Writes `bytes` on a fresh connection and reads until the server closes it or `timeoutMs` passes. */
export function rawSocket(
  port: number,
  bytes: string | Buffer,
  timeoutMs = 3_000,
): Promise<{ status: number; text: string; closed: boolean; ms: number }> {
  const started = performance.now();
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let closed = false;
    const timer = setTimeout(() => socket.destroy(), timeoutMs);
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', () => undefined);
    socket.on('end', () => {
      closed = true;
    });
    socket.on('close', () => {
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString('latin1');
      const match = /^HTTP\/1\.[01] (\d{3})/.exec(text);
      resolve({ status: match ? Number(match[1]) : 0, text, closed: closed || chunks.length > 0, ms: performance.now() - started });
    });
    socket.write(bytes);
  });
}

/** Runs `jobs` with at most `concurrency` at a time; resolves when all are done. */
export async function runPool<T>(jobs: readonly (() => Promise<T>)[], concurrency: number): Promise<T[]> {
  const results: T[] = new Array(jobs.length);
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) {
      const i = next++;
      results[i] = await (jobs[i] as () => Promise<T>)();
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, jobs.length) }, worker));
  return results;
}

/** Parses a JSON body, or `undefined`. */
export function jsonOf(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
}
