/**
 * Client faults are client errors (docs/behaviour.md "Resilience": only upstream timeouts, connection
 * failures and 502/503/504 answers count as upstream failures). Over real sockets: a JSON body nested
 * deeper than the bound, a client closing mid-body, a client that stops sending an upload, and a cut
 * (unterminated) multipart upload each answer 4xx (or are cut at the client's own limit), abort any
 * upstream call they started, log no "upstream failure" and add nothing to `upstream_errors_total`;
 * a real upstream failure, as a control, does. At the call's time limit, a streamed upload is the client's
 * fault only when the call is waiting on the client's bytes (`BodySource`), whatever the streams buffer.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, beforeEach, describe, test } from 'node:test';
import type { Pool } from 'undici';
import { MAX_JSON_DEPTH, nestedDeeperThan } from '../src/pipeline/body.js';
import { type BodySource, UpstreamService } from '../src/upstream/client.js';
import { UpstreamError } from '../src/upstream/errors.js';
import { PoolRegistry } from '../src/upstream/pools.js';
import { fakeJwt, send, startProxy, type TestProxy } from './helpers/recording-upstream.js';

describe('nestedDeeperThan', () => {
  const cases: [string, string, number, boolean][] = [
    ['flat object', '{"a":1,"b":"x"}', 1, false],
    ['two levels against one', '{"a":[1]}', 1, true],
    ['brackets inside strings do not count', '{"a":"[[[[{{{{"}', 1, false],
    ['an escaped quote does not end the string', '{"a":"\\"[[[["}', 1, false],
    ['an escaped backslash before a quote ends it', '{"a":"\\\\"}', 1, false],
    ['32 levels pass the bound', `${'['.repeat(32)}${']'.repeat(32)}`, MAX_JSON_DEPTH, false],
    ['33 levels do not', `${'['.repeat(33)}${']'.repeat(33)}`, MAX_JSON_DEPTH, true],
    ['siblings do not add up', `[${'[[]],'.repeat(100)}[]]`, 3, false],
    ['10,000 levels', `{"x":${'['.repeat(10_000)}${']'.repeat(10_000)}}`, MAX_JSON_DEPTH, true],
  ];
  for (const [name, text, max, expected] of cases) {
    test(`${name} → ${expected}`, () => assert.equal(nestedDeeperThan(text, max), expected));
  }
});

/** How the stand-in upstream of {@link StandInPools} reads a stream body: not at all, all of it, or one chunk then stops. */
type Reading = 'never' | 'all' | 'one';

/** Pools whose dispatcher reads a call's stream body as {@link Reading} says and never answers. */
class StandInPools extends PoolRegistry {
  readonly #reading: Reading;
  constructor(reading: Reading, timeoutMs: number) {
    super(timeoutMs);
    this.#reading = reading;
  }
  override get(): Pool {
    const reading = this.#reading;
    const dispatcher = {
      dispatch(options: { body: Readable }): boolean {
        if (reading === 'all') options.body.on('data', () => undefined);
        else if (reading === 'one') options.body.once('data', () => options.body.pause());
        return true;
      },
    };
    return dispatcher as unknown as Pool;
  }
}

/** A body as the upload route makes it: at most one chunk held, `source` kept up to date with the wait for the client. */
function trackedBody(client: AsyncIterable<Buffer>, source: BodySource): Readable {
  async function* chunks() {
    source.waitingSince = performance.now();
    for await (const chunk of client) {
      source.waitingSince = 0;
      yield chunk;
      source.waitingSince = performance.now();
    }
    source.waitingSince = 0;
  }
  return Readable.from(chunks(), { objectMode: false, highWaterMark: 1 });
}

/** A client that sends two 16 KiB chunks, then stops for good (`stalls`) or sends its last one. */
async function* uploadingClient(stalls: boolean): AsyncGenerator<Buffer> {
  yield Buffer.alloc(16 * 1024);
  yield Buffer.alloc(16 * 1024);
  if (stalls) await new Promise(() => undefined);
  yield Buffer.alloc(1024);
}

describe("a streamed upload at the call's time limit: who held the call up", () => {
  const cases: [string, Reading, boolean, string][] = [
    ['the upstream read everything the client sent, the client stopped: the client', 'all', true, 'client_aborted'],
    ['the upstream read the whole body and never answered: the upstream', 'all', false, 'upstream_timeout'],
    ['the upstream never started reading (queued, connecting), the client sent it all: the upstream', 'never', false, 'upstream_timeout'],
    ['the upstream never started reading, the client stopped too: the upstream', 'never', true, 'upstream_timeout'],
    ['the upstream stopped reading with a chunk of the client in hand: the upstream', 'one', false, 'upstream_timeout'],
    ['the upstream stopped reading with a chunk in hand, the client stopped after it: the upstream', 'one', true, 'upstream_timeout'],
  ];
  for (const [name, reading, stalls, code] of cases) {
    test(`${name} → ${code}`, async () => {
      const service = new UpstreamService('BFF_BASE_URL', 'http://127.0.0.1:9', new StandInPools(reading, 100));
      const bodySource: BodySource = { waitingSince: 0 };
      const body = trackedBody(uploadingClient(stalls), bodySource);
      const error = await service.request({ method: 'POST', path: '/documents/selfie', body, bodySource }).then(
        () => assert.fail('no answer was expected'),
        (e: unknown) => e,
      );
      assert.ok(error instanceof UpstreamError);
      assert.equal(error.code, code);
      body.destroy();
    });
  }
  test('a stream body without its source is an upstream timeout at the limit', async () => {
    const service = new UpstreamService('BFF_BASE_URL', 'http://127.0.0.1:9', new StandInPools('all', 100));
    const body = Readable.from(uploadingClient(true), { objectMode: false });
    const error = await service.request({ method: 'POST', path: '/documents/selfie', body }).catch((e: unknown) => e);
    assert.ok(error instanceof UpstreamError);
    assert.equal(error.code, 'upstream_timeout');
    body.destroy();
  });
});

/** A BFF that records which requests started, which bodies arrived whole and which were cut. */
interface CountingBff {
  url: string;
  started: string[];
  completed: string[];
  aborted: string[];
  reset(): void;
  close(): Promise<void>;
}

async function countingBff(): Promise<CountingBff> {
  const state = { started: [] as string[], completed: [] as string[], aborted: [] as string[] };
  const server: Server = createServer((req: IncomingMessage, res) => {
    const path = (req.url ?? '').split('?')[0] ?? '';
    state.started.push(path);
    // The control: an upstream that resets the connection (a real upstream failure).
    if (path === '/bff/games/user-last-casino-games-dl') {
      req.socket.destroy();
      return;
    }
    // Another control: an upstream that neither reads the upload nor answers is an upstream timeout.
    if (path === '/documents/document-back') {
      req.pause();
      return;
    }
    req.on('data', () => undefined);
    req.on('end', () => {
      state.completed.push(path);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"ok":true}');
    });
    req.on('close', () => {
      if (!req.complete) state.aborted.push(path);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    ...state,
    reset() {
      for (const list of Object.values(state)) list.length = 0;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * Writes `head` then `body` on a raw socket, then ends it (`end`: a half-close), closes it after `waitMs`
 * (`destroy`) or keeps it open (`stall`: waits for the answer); resolves with what came back once the socket closes.
 */
function rawUpload(
  base: string,
  head: string,
  body: Buffer,
  then: 'end' | 'destroy' | 'stall',
  waitMs = 300,
): Promise<{ status: number; text: string; closedAfterMs: number }> {
  const url = new URL(base);
  return new Promise((resolve) => {
    const socket = connect(Number(url.port), url.hostname);
    const chunks: Buffer[] = [];
    const started = performance.now();
    let settled = false;
    const finish = () => {
      if (settled) return;
      settled = true;
      const text = Buffer.concat(chunks).toString('utf8');
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0), text, closedAfterMs: performance.now() - started });
    };
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', () => undefined);
    socket.on('close', finish);
    socket.write(head);
    socket.write(body, () => {
      if (then === 'end') socket.end();
      else if (then === 'destroy') setTimeout(() => socket.destroy(), waitMs);
    });
    setTimeout(() => {
      socket.destroy();
      finish();
    }, 10_000).unref();
  });
}

const BOUNDARY = '----cut-form-boundary';
function multipartHead(base: string, token: string, contentLength: number): string {
  const url = new URL(base);
  return (
    `POST /api/user/store-document?endpoint=selfie HTTP/1.1\r\nHost: ${url.host}\r\nCookie: access_token=${token}\r\n` +
    `Content-Type: multipart/form-data; boundary=${BOUNDARY}\r\nContent-Length: ${contentLength}\r\n\r\n`
  );
}
const FILE_PART = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n`;

describe('client faults over real sockets', () => {
  let bff: CountingBff;
  let proxy: TestProxy;
  const upstreamErrors = async () => {
    const text = await (proxy.app.metrics as NonNullable<TestProxy['app']['metrics']>).registry.metrics();
    return text
      .split('\n')
      .filter((l) => l.startsWith('front_proxy_upstream_errors_total{'))
      .reduce((sum, l) => sum + Number(l.split(' ').pop()), 0);
  };
  const upstreamFailureLines = () => proxy.logs.lines.filter((l) => l.includes('"upstream failure"')).length;
  before(async () => {
    bff = await countingBff();
    // The upstream limit is shorter than the request limit (as in production, 15 s and 30 s): a stalled upload meets it first.
    proxy = await startProxy(bff.url, { METRICS_PORT: '0', UPSTREAM_TIMEOUT_MS: '1000' });
  });
  after(async () => {
    await proxy.close();
    await bff.close();
  });
  beforeEach(() => bff.reset());

  test('control: an upstream that resets is an upstream failure (502, logged, counted)', async () => {
    const [errors, lines] = [await upstreamErrors(), upstreamFailureLines()];
    const res = await send(proxy.url, 'GET', '/api/user/last-casino-games', { token: fakeJwt() });
    assert.equal(res.status, 502);
    assert.equal(await upstreamErrors(), errors + 1);
    assert.equal(upstreamFailureLines(), lines + 1);
  });

  test('control: an upstream that neither reads an upload nor answers is still an upstream timeout (504, counted)', async () => {
    const [errors, lines] = [await upstreamErrors(), upstreamFailureLines()];
    const body = Buffer.concat([Buffer.from(FILE_PART), Buffer.alloc(4 * 1024 * 1024, 0x64), Buffer.from(`\r\n--${BOUNDARY}--\r\n`)]);
    const head = multipartHead(proxy.url, fakeJwt(), body.length).replace('endpoint=selfie', 'endpoint=document-back');
    // The client sends the whole body and waits for the answer, as a browser does. It must not half-close: a
    // client's FIN closes the connection (Node.js's HTTP server), and whether the proxy reads up to that FIN
    // before its answer depends on how much the streams on the way buffer (64 KiB each from Node.js 22, 16 KiB
    // before): on Node.js 24 the whole 4 MiB and the FIN are read at once and the 504 has no connection left.
    const res = await rawUpload(proxy.url, head, body, 'stall');
    assert.equal(res.status, 504, res.text.slice(0, 300));
    assert.equal(await upstreamErrors(), errors + 1);
    assert.equal(upstreamFailureLines(), lines + 1);
  });

  test('a JSON body nested 10,000 deep answers 400 at parse time, nothing sent (recovery, registration)', async () => {
    const [errors, lines] = [await upstreamErrors(), upstreamFailureLines()];
    const deep = `${'['.repeat(10_000)}${']'.repeat(10_000)}`;
    const bodies: [string, string][] = [
      // 1,000 levels on recovery: its body limit (16 KiB) refuses a 10,000-deep body by its size first.
      ['/api/auth/recovery', `{"step":"options","login":"a@example.com","x":${'['.repeat(1_000)}${']'.repeat(1_000)}}`],
      ['/api/auth/register', `{"email":"a@example.com","password":"Secret#2026","user_prudential_limit_active":${deep}}`],
      [
        '/api/auth/recovery',
        `{"step":"options","login":"a@example.com","x":${'{"a":'.repeat(MAX_JSON_DEPTH)}1${'}'.repeat(MAX_JSON_DEPTH)}}`,
      ],
    ];
    for (const [path, body] of bodies) {
      const res = await send(proxy.url, 'POST', path, { body, headers: { 'content-type': 'application/json' } });
      assert.equal(res.status, 400, `${path}: ${res.text}`);
      assert.deepEqual(res.json, { ok: false, error: 'invalid_request', detail: 'The body is nested too deeply' });
    }
    assert.deepEqual(bff.started, []);
    // 32 levels in all are still accepted (the recovery body itself is one of them).
    const within = `{"step":"options","login":"a@example.com","x":${'['.repeat(MAX_JSON_DEPTH - 1)}${']'.repeat(MAX_JSON_DEPTH - 1)}}`;
    // (Recovery refuses the unknown field `x` by its schema; the depth bound did not refuse it.)
    const answer = await send(proxy.url, 'POST', '/api/auth/recovery', { body: within, headers: { 'content-type': 'application/json' } });
    assert.notDeepEqual(answer.json, { ok: false, error: 'invalid_request', detail: 'The body is nested too deeply' });
    assert.equal(await upstreamErrors(), errors);
    assert.equal(upstreamFailureLines(), lines);
  });

  test('a client closing mid-body on a JSON route: logged as a client abort, nothing sent, nothing counted', async () => {
    const [errors, lines] = [await upstreamErrors(), upstreamFailureLines()];
    const url = new URL(proxy.url);
    const head = `POST /api/auth/recovery HTTP/1.1\r\nHost: ${url.host}\r\nContent-Type: application/json\r\nContent-Length: 4000\r\n\r\n`;
    await rawUpload(proxy.url, head, Buffer.from('{"step":"options","login":"a@example.com","pad":"'), 'destroy', 100);
    await sleep(200);
    assert.deepEqual(bff.started, []);
    assert.ok(
      proxy.logs.lines.some((l) => l.includes('"client aborted"')),
      'logged as a client abort',
    );
    assert.equal(upstreamFailureLines(), lines);
    assert.equal(await upstreamErrors(), errors);
  });

  test('an unterminated multipart upload aborts its upstream call and answers 400', async () => {
    const [errors, lines] = [await upstreamErrors(), upstreamFailureLines()];
    const token = fakeJwt();
    // The whole declared length arrives, but the form never closes (no final boundary).
    const body = Buffer.concat([Buffer.from(FILE_PART), Buffer.alloc(256 * 1024, 0x61)]);
    const res = await rawUpload(proxy.url, multipartHead(proxy.url, token, body.length), body, 'end');
    assert.equal(res.status, 400, res.text.slice(0, 300));
    assert.match(res.text, /"error":"invalid_request"/);
    await sleep(100);
    assert.deepEqual(bff.completed, [], 'the BFF never received a whole body');
    assert.deepEqual(bff.started, bff.aborted, 'a call that started was aborted');
    assert.equal(upstreamFailureLines(), lines);
    assert.equal(await upstreamErrors(), errors);
  });

  test('a client closing mid-upload: the upstream call is aborted, logged as a client fault, nothing counted', async () => {
    const [errors, lines] = [await upstreamErrors(), upstreamFailureLines()];
    const part = Buffer.concat([Buffer.from(FILE_PART), Buffer.alloc(512 * 1024, 0x62)]);
    await rawUpload(proxy.url, multipartHead(proxy.url, fakeJwt(), 4 * 1024 * 1024), part, 'destroy', 300);
    await sleep(300);
    assert.deepEqual(bff.started, ['/documents/selfie'], 'the upload had started upstream');
    assert.deepEqual(bff.aborted, ['/documents/selfie'], 'and was cut');
    assert.ok(proxy.logs.lines.some((l) => l.includes('"multipart body refused"') && l.includes('client_aborted')));
    assert.equal(upstreamFailureLines(), lines);
    assert.equal(await upstreamErrors(), errors);
  });

  test('a client that stops sending an upload: 400 at the upstream limit, not 504; its upstream call aborted, nothing counted', async () => {
    const [errors, lines] = [await upstreamErrors(), upstreamFailureLines()];
    const part = Buffer.concat([Buffer.from(FILE_PART), Buffer.alloc(64 * 1024, 0x63)]);
    const res = await rawUpload(proxy.url, multipartHead(proxy.url, fakeJwt(), 4 * 1024 * 1024), part, 'stall');
    assert.equal(res.status, 400, res.text.slice(0, 300));
    assert.match(res.text, /"detail":"The upload did not arrive whole"/);
    assert.ok(res.closedAfterMs < 5_000, `closed after ${Math.round(res.closedAfterMs)} ms`);
    await sleep(200);
    assert.deepEqual(bff.completed, []);
    assert.deepEqual(bff.aborted, bff.started);
    assert.equal(upstreamFailureLines(), lines);
    assert.equal(await upstreamErrors(), errors);
  });
});
