/**
 * Hardening row 13, early answers while the body is still arriving (docs/behaviour.md "Error envelope":
 * a body larger than the route's limit answers 413 and the client reads the answer even while it is
 * still sending). A client that writes a whole 5 MB body before it reads anything — what a browser
 * upload does — over raw sockets: `Content-Length` and chunked bodies to login (413), a cross-site
 * upload (403) and a `text/plain` upload (415); then the bounds of the lingering close (a client that
 * stops sending mid-body, a client that never stops) and a Chromium `fetch` upload of 5 MB from a page
 * of the proxy.
 *
 * Pass: every such client reads the whole answer (status and envelope) and never a reset; a stalled
 * client's socket is closed within `LINGER.timeMs` (+ 1 s); an endless body is cut once `LINGER.maxBytes`
 * has been discarded (well before it ends); the proxy still answers afterwards; nothing upstream.
 */
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { after, before, test } from 'node:test';
import { LINGER } from '../../src/pipeline/body.js';
import { chromiumSkip, launchChromium } from '../helpers/chromium.js';
import { rawRequest } from './helpers/client.js';
import { FULL, Figures } from './helpers/figures.js';
import { type Harness, startHarness } from './helpers/harness.js';

const figures = new Figures('early-answers', 13, 'Early answers during uploads');
const FIVE_MB = 5 * 1024 * 1024;
const ROUNDS = FULL ? 20 : 3;
let h: Harness;

before(async () => {
  h = await startHarness();
});
after(async () => {
  await h.close();
  figures.write();
});

interface Outcome {
  /** The status read, or 0. */
  status: number;
  /** The envelope's `error`, when the body was JSON. */
  error?: string;
  /** The socket error seen while writing or reading (`EPIPE`, `ECONNRESET`…), if any. */
  socketError?: string;
  /** Body bytes the client managed to write. */
  written: number;
  /** Milliseconds from the end of writing (or the write error) to the close of the socket. */
  closeMs: number;
}

/** Reads what the server sends until it closes the connection or `timeoutMs` passes. */
function readAll(socket: Socket, timeoutMs: number): Promise<{ text: string; error?: string }> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let error: string | undefined;
    const timer = setTimeout(() => socket.destroy(), timeoutMs);
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', (e: NodeJS.ErrnoException) => {
      error ??= e.code ?? e.message;
    });
    socket.once('close', () => {
      clearTimeout(timer);
      resolve({ text: Buffer.concat(chunks).toString('utf8'), error });
    });
    socket.resume();
  });
}

function outcomeOf(text: string, error: string | undefined, written: number, closeMs: number): Outcome {
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
  const body = text.split('\r\n\r\n').slice(1).join('\r\n\r\n');
  let envelopeError: string | undefined;
  try {
    envelopeError = (JSON.parse(body) as { error?: string }).error;
  } catch {
    envelopeError = undefined;
  }
  return { status, error: envelopeError, socketError: error, written, closeMs };
}

/**
 * Connects, writes `head` and the whole `body` (in 64 KiB writes, waiting for the socket to drain) and
 * only then reads: a client that reads early would hide the reset this row is about.
 */
async function writeThenRead(head: string, body: Buffer, trailer = ''): Promise<Outcome> {
  const socket = connect(h.port, '127.0.0.1');
  socket.pause();
  let writeError: string | undefined;
  socket.on('error', (e: NodeJS.ErrnoException) => {
    writeError ??= e.code ?? e.message;
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  const write = (chunk: Buffer | string) =>
    new Promise<boolean>((resolve) => {
      if (writeError || socket.destroyed) return resolve(false);
      const flushed = socket.write(chunk, (error) => resolve(!error));
      if (!flushed) socket.once('drain', () => undefined);
    });
  let written = 0;
  if (await write(head)) {
    for (let at = 0; at < body.length; at += 64 * 1024) {
      const chunk = body.subarray(at, at + 64 * 1024);
      if (!(await write(chunk))) break;
      written += chunk.length;
    }
    if (trailer && written === body.length) await write(trailer);
  }
  const ended = performance.now();
  const read = await readAll(socket, 10_000);
  return outcomeOf(read.text, writeError ?? read.error, written, performance.now() - ended);
}

function record(label: string, o: Outcome, status: number, error: string): void {
  figures.inputs++;
  figures.status(o.status ? (o.socketError ? `${o.status}+${o.socketError}` : o.status) : (o.socketError ?? 'no answer'));
  figures.check(
    o.status === status && o.error === error,
    `${label}: read ${o.status} ${String(o.error)} (socket ${o.socketError ?? 'ok'}, ${o.written} bytes written)`,
  );
  figures.check(o.socketError === undefined, `${label}: socket error ${String(o.socketError)} after ${o.written} bytes written`);
}

test('row 13: a client that writes a whole 5 MB body before reading reads the 413 / 403 / 415 envelope, never a reset', async () => {
  await figures.run('write then read', async () => {
    const body = Buffer.alloc(FIVE_MB, 'a');
    const host = `127.0.0.1:${h.port}`;
    const seenBefore = h.upstream.total;
    let slowest = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const variants: [string, string, string, number, string][] = [
        [
          'Content-Length to login',
          `POST /api/auth/login HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nContent-Length: ${FIVE_MB}\r\n\r\n`,
          '',
          413,
          'payload_too_large',
        ],
        [
          'chunked to login',
          `POST /api/auth/login HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n${FIVE_MB.toString(16)}\r\n`,
          '\r\n0\r\n\r\n',
          413,
          'payload_too_large',
        ],
        [
          'cross-site upload',
          `POST /api/auth/login HTTP/1.1\r\nHost: ${host}\r\nSec-Fetch-Site: cross-site\r\nContent-Type: application/json\r\nContent-Length: ${FIVE_MB}\r\n\r\n`,
          '',
          403,
          'csrf_rejected',
        ],
        [
          'text/plain upload',
          `POST /api/auth/login HTTP/1.1\r\nHost: ${host}\r\nContent-Type: text/plain\r\nContent-Length: ${FIVE_MB}\r\n\r\n`,
          '',
          415,
          'unsupported_media_type',
        ],
        [
          'beacon over 4 KB',
          `POST /api/logs/auth-logout HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nContent-Length: ${FIVE_MB}\r\n\r\n`,
          '',
          413,
          'payload_too_large',
        ],
      ];
      for (const [label, head, trailer, status, error] of variants) {
        const o = await writeThenRead(head, body, trailer);
        record(`${label} (round ${round + 1})`, o, status, error);
        figures.check(o.written === FIVE_MB, `${label}: only ${o.written} of ${FIVE_MB} bytes written`);
        slowest = Math.max(slowest, o.closeMs);
      }
    }
    const calls = h.upstream.total - seenBefore;
    figures.upstreamCallsForRejected += calls;
    figures.check(calls === 0, `${calls} upstream call(s) for refused uploads`);
    figures.note(
      `${ROUNDS} rounds × 5 uploads of 5 MiB written whole before reading; slowest close after the last byte: ${Math.round(slowest)} ms`,
    );
  });
  assert.equal(figures.failureCount, 0, figures.summary());
});

test('row 13: the lingering close is bounded in time and in bytes; the proxy answers afterwards', async () => {
  await figures.run('bounds', async () => {
    const host = `127.0.0.1:${h.port}`;
    // A client that announces 50 MB, sends 2 MB, then stops sending but keeps its side open (half-open:
    // it does not answer the proxy's FIN with its own).
    const stalled = connect({ port: h.port, host: '127.0.0.1', allowHalfOpen: true });
    await new Promise((resolve) => stalled.once('connect', resolve));
    stalled.write(
      `POST /api/auth/login HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nContent-Length: ${50 * 1024 * 1024}\r\n\r\n`,
    );
    stalled.write(Buffer.alloc(2 * 1024 * 1024, 'b'));
    const stalledStart = performance.now();
    // The answer, then the proxy's FIN; the client keeps its side open. The proxy's final close is
    // seen by the client only when it writes: one byte every 100 ms until a write fails.
    const chunks: Buffer[] = [];
    let stalledError: string | undefined;
    stalled.on('data', (c: Buffer) => chunks.push(c));
    stalled.on('error', (e: NodeJS.ErrnoException) => {
      stalledError ??= e.code ?? e.message;
    });
    while (stalledError === undefined && !stalled.destroyed && performance.now() - stalledStart < LINGER.timeMs + 5_000) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      if (stalled.readableEnded) stalled.write('b');
    }
    const stalledMs = performance.now() - stalledStart;
    stalled.destroy();
    const stalledOutcome = outcomeOf(Buffer.concat(chunks).toString('utf8'), stalledError, 2 * 1024 * 1024, stalledMs);
    figures.inputs++;
    figures.status(stalledOutcome.status ? `${stalledOutcome.status} stalled` : 'stalled no answer');
    figures.check(
      stalledOutcome.status === 413 && stalledOutcome.error === 'payload_too_large',
      `stalled upload: read ${stalledOutcome.status}`,
    );
    figures.check(
      stalledError !== undefined && stalledMs >= LINGER.timeMs - 100 && stalledMs <= LINGER.timeMs + 1_000,
      `stalled upload: socket closed after ${Math.round(stalledMs)} ms (${stalledError ?? 'still open'}; bound ${LINGER.timeMs} ms)`,
    );

    // A client that never stops sending: cut once LINGER.maxBytes have been discarded.
    const endless = connect(h.port, '127.0.0.1');
    await new Promise((resolve) => endless.once('connect', resolve));
    let endlessError: string | undefined;
    endless.on('error', (e: NodeJS.ErrnoException) => {
      endlessError ??= e.code ?? e.message;
    });
    const announced = 256 * 1024 * 1024;
    endless.write(
      `POST /api/auth/login HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nContent-Length: ${announced}\r\n\r\n`,
    );
    const chunk = Buffer.alloc(64 * 1024, 'c');
    let sent = 0;
    const endlessStart = performance.now();
    while (
      sent < announced &&
      !endless.destroyed &&
      endlessError === undefined &&
      performance.now() - endlessStart < LINGER.timeMs + 3_000
    ) {
      const ok = await new Promise<boolean>((resolve) => endless.write(chunk, (error) => resolve(!error)));
      if (!ok) break;
      sent += chunk.length;
    }
    endless.destroy();
    figures.inputs++;
    figures.status(`endless cut (${endlessError ?? 'closed'})`);
    figures.check(sent < announced, `endless upload: all ${sent} bytes were read`);
    const cutMs = performance.now() - endlessStart;
    figures.check(cutMs <= LINGER.timeMs + 3_000, `endless upload: cut after ${Math.round(cutMs)} ms`);

    // The proxy still answers.
    const after = await rawRequest(h.base, { method: 'GET', path: '/api/version' });
    figures.inputs++;
    figures.status(after.status);
    figures.check(after.status === 200, `GET /api/version afterwards: ${after.status}`);
    figures.check(h.crashes.length === 0, `uncaught errors: ${h.crashes.join('; ')}`);
    figures.note(
      `bounds (${LINGER.timeMs} ms, ${LINGER.maxBytes / 1024 / 1024} MiB): a stalled upload read its 413 and was closed after ${Math.round(stalledMs)} ms; ` +
        `an endless upload was cut after ${(sent / 1024 / 1024).toFixed(1)} MiB written by the client (${Math.round(cutMs)} ms, ${endlessError ?? 'closed'})`,
    );
  });
  assert.equal(figures.failureCount, 0, figures.summary());
});

test(
  'row 13: a Chromium fetch upload of 5 MB to /api/auth/login from a page of the proxy reads 413',
  { skip: chromiumSkip, timeout: 60_000 },
  async () => {
    await figures.run('chromium', async () => {
      const browser = await launchChromium();
      try {
        const page = await browser.newPage();
        await page.goto(`${h.base}/api/version`);
        const rounds = FULL ? 10 : 3;
        for (let i = 0; i < rounds; i++) {
          const answer = await page.evaluate(async (size: number) => {
            try {
              const res = await fetch('/api/auth/login', {
                method: 'POST',
                headers: { 'content-type': 'application/json' },
                body: 'a'.repeat(size),
              });
              const body = (await res.json()) as { error?: string };
              return { status: res.status, error: body.error };
            } catch (error) {
              return { status: 0, error: String(error) };
            }
          }, FIVE_MB);
          figures.inputs++;
          figures.status(answer.status ? `${answer.status} chromium` : 'chromium failed');
          figures.check(
            answer.status === 413 && answer.error === 'payload_too_large',
            `Chromium fetch upload ${i + 1}: ${answer.status} ${String(answer.error)}`,
          );
        }
        figures.note(`Chromium: ${rounds} fetch uploads of 5 MiB from ${'`'}/api/version${'`'} (same origin)`);
      } finally {
        await browser.close();
      }
    });
    assert.equal(figures.failureCount, 0, figures.summary());
  },
);
