/**
 * Test helpers for the process as `npm start` runs it (`node --import tsx src/server.ts`): start one
 * with given variables and read its address from its log, and a raw HTTP/1.1 connection that keeps
 * its socket (keep-alive, pipelining) and reads the answers in order, for the drain tests. Loopback
 * only; every process started here is stopped by its PID in the test's `after` hook.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { connect, createServer as createNetServer, type Socket } from 'node:net';

/** A proxy process and what it printed. */
export interface ProxyProcess {
  readonly child: ChildProcess;
  readonly pid: number;
  /** Everything printed so far (standard output and error). */
  output(): string;
  /** The `http://127.0.0.1:port` it listens on, once its log says so; rejects when it exits first. */
  readonly address: Promise<string>;
  /** Resolves when it exits, with its code (or signal) and the time of the exit (`Date.now()`). */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>;
  /** Sends SIGKILL when it still runs, and waits for the exit. */
  kill(): Promise<void>;
}

/**
 * Starts the proxy with `env` (plus `PATH`, `HOST=127.0.0.1`, `LOG_LEVEL=info`) and waits for nothing:
 * await `address` to know it listens.
 */
export function startProxyProcess(env: Record<string, string>, readyTimeoutMs = 30_000): ProxyProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal, at: Date.now() }));
  });
  const address = new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no address after ${readyTimeoutMs} ms: ${out.slice(-800)}`)), readyTimeoutMs);
    const onData = (chunk: Buffer) => {
      out += chunk.toString('utf8');
      const match = /front proxy listening on (http:\/\/[0-9.:]+)/.exec(out);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${code ?? signal} before listening: ${out.slice(-800)}`));
    });
  });
  address.catch(() => undefined); // a process expected to fail never prints an address
  return {
    child,
    pid: child.pid ?? 0,
    output: () => out,
    address,
    exited,
    async kill() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGKILL');
        await exited;
      }
    },
  };
}

/** A free TCP port on 127.0.0.1 (bound then released). */
export async function freePort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Resolves true once `predicate` holds, false after `timeoutMs` (checked every 10 ms). */
export function waitFor(predicate: () => boolean, timeoutMs: number): Promise<boolean> {
  const started = Date.now();
  return new Promise((resolve) => {
    const tick = () => {
      if (predicate()) resolve(true);
      else if (Date.now() - started > timeoutMs) resolve(false);
      else setTimeout(tick, 10);
    };
    tick();
  });
}

/** One answer read from a {@link RawConnection}. */
export interface RawHttpAnswer {
  status: number;
  /** Header names in lower case; a repeated header keeps its last value. */
  headers: Record<string, string>;
  body: string;
  /** When its last byte arrived (`Date.now()`). */
  at: number;
}

/**
 * An HTTP/1.1 client connection over a raw socket: requests are written as soon as they are sent
 * (several may be in flight: pipelining), answers are read in order (`Content-Length` bodies, which
 * is what the proxy sends).
 */
export class RawConnection {
  readonly socket: Socket;
  /** When the socket closed (`Date.now()`), once it has. */
  closedAt: number | undefined;
  /** Resolves when the socket closes. */
  readonly closed: Promise<number>;
  private buffer = Buffer.alloc(0);
  private readonly answers: RawHttpAnswer[] = [];
  private readonly waiting: ((answer: RawHttpAnswer | undefined) => void)[] = [];

  private constructor(
    socket: Socket,
    private readonly host: string,
  ) {
    this.socket = socket;
    socket.on('data', (chunk: Buffer) => {
      this.buffer = Buffer.concat([this.buffer, chunk]);
      this.parse();
    });
    socket.on('error', () => undefined);
    this.closed = new Promise((resolve) => {
      socket.once('close', () => {
        this.closedAt = Date.now();
        for (const wake of this.waiting.splice(0)) wake(undefined);
        resolve(this.closedAt);
      });
    });
  }

  /** Connects to `base` (`http://127.0.0.1:port`); rejects with the socket error (`ECONNREFUSED`…). */
  static open(base: string): Promise<RawConnection> {
    const url = new URL(base);
    return new Promise((resolve, reject) => {
      const socket = connect(Number(url.port), url.hostname);
      socket.once('error', reject);
      socket.once('connect', () => {
        socket.off('error', reject);
        resolve(new RawConnection(socket, url.host));
      });
    });
  }

  /** Writes one GET request (keep-alive unless `headers` say otherwise). */
  send(path: string, headers: Record<string, string> = {}): void {
    const lines = [`GET ${path} HTTP/1.1`, `Host: ${this.host}`];
    for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
    this.socket.write(`${lines.join('\r\n')}\r\n\r\n`);
  }

  /** The next answer in order, or `undefined` when the socket closes first or `timeoutMs` passes. */
  next(timeoutMs = 10_000): Promise<RawHttpAnswer | undefined> {
    const ready = this.answers.shift();
    if (ready) return Promise.resolve(ready);
    if (this.closedAt !== undefined) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        const index = this.waiting.indexOf(wake);
        if (index >= 0) this.waiting.splice(index, 1);
        resolve(undefined);
      }, timeoutMs);
      const wake = (answer: RawHttpAnswer | undefined) => {
        clearTimeout(timer);
        resolve(answer);
      };
      this.waiting.push(wake);
    });
  }

  /** Closes the socket (no-op when already closed). */
  destroy(): void {
    this.socket.destroy();
  }

  private parse(): void {
    for (;;) {
      const end = this.buffer.indexOf('\r\n\r\n');
      if (end < 0) return;
      const [statusLine = '', ...lines] = this.buffer.subarray(0, end).toString('latin1').split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(':');
        if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      const length = Number(headers['content-length'] ?? 'NaN');
      if (!Number.isInteger(length)) throw new Error(`answer without Content-Length: ${statusLine}`);
      if (this.buffer.length < end + 4 + length) return;
      const body = this.buffer.subarray(end + 4, end + 4 + length).toString('utf8');
      this.buffer = this.buffer.subarray(end + 4 + length);
      const answer = { status: Number(statusLine.split(' ')[1] ?? 0), headers, body, at: Date.now() };
      const wake = this.waiting.shift();
      if (wake) wake(answer);
      else this.answers.push(answer);
    }
  }
}

/**
 * One request on a connection of its own (`Connection: close`): the answer, or the connection error's
 * code (`ECONNREFUSED` once the listener is closed).
 */
export async function oneShot(
  base: string,
  path: string,
  headers: Record<string, string> = {},
): Promise<RawHttpAnswer | { error: string }> {
  let connection: RawConnection;
  try {
    connection = await RawConnection.open(base);
  } catch (error) {
    return { error: (error as NodeJS.ErrnoException).code ?? String(error) };
  }
  connection.send(path, { ...headers, Connection: 'close' });
  const answer = await connection.next(10_000);
  connection.destroy();
  return answer ?? { error: 'closed without an answer' };
}
