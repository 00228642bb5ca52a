/**
 * docs/behaviour.md "Error envelope", the `X-Error-Ref` paragraph, over real loopback sockets: every error
 * answer carries `X-Error-Ref`, equal to the reference the browser SDK computes for the very answer
 * it received (its `ProxyError`, through the SDK's own client), and the request's log line carries
 * it as `ref`; success answers carry neither. Covers the proxy's own refusals (401 no_token, 403 CSRF,
 * 400 validation, 413, 415, 404, the router's 400), upstream failures (401/403 passed through byte for
 * byte, 503 envelope, 504 timeout, 502 reset), the answers written on the raw socket (431, 400) and
 * the drain's 503.
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { test } from 'node:test';
import { createProxyClient, memoryStorage, ProxyError, type RawRequestInput } from '../packages/browser/src/browser/index.js';
import { classifyError } from '../src/errors/index.js';
import { errorRefOf } from '../src/pipeline/error-ref.js';
import { fakeJwt, type LogCapture, send, startProxy, useProxiesWithRecorder } from './helpers/recording-upstream.js';

const TIMEOUT_MS = 300;
const {
  upstream,
  proxies: [proxy, slowProxy],
} = useProxiesWithRecorder([{}, { env: { UPSTREAM_TIMEOUT_MS: String(TIMEOUT_MS) } }]);

/** One answer as the SDK's client saw it: the failure it raised, and the answer's status, headers and text. */
interface Seen {
  status: number;
  headers: Headers;
  text: string;
  error: ProxyError | undefined;
}

/** Calls the proxy through the browser SDK's client (Node's fetch), keeping a copy of the answer. */
async function viaSdk(base: string, method: string, path: string, input: RawRequestInput & { token?: string } = {}): Promise<Seen> {
  let last: Response | undefined;
  const fetchImpl = (async (url: RequestInfo | URL, init?: RequestInit) => {
    const res = await fetch(url, init);
    last = res.clone();
    return res;
  }) as typeof fetch;
  const client = createProxyClient({ baseUrl: base, fetch: fetchImpl, sendBeacon: null, storage: memoryStorage() });
  const headers: Record<string, string> = { ...input.headers };
  if (input.token) headers.cookie = `access_token=${input.token}`;
  let error: ProxyError | undefined;
  try {
    await client.request(method, path, { ...input, headers });
  } catch (e) {
    if (!(e instanceof ProxyError)) throw e;
    error = e;
  }
  assert.ok(last, 'the client called the proxy');
  return { status: last.status, headers: last.headers, text: await last.text(), error };
}

/** The SDK's classification path (`ProxyError`) for an answer received outside its client. */
function sdkRefOf(method: string, path: string, status: number, text: string, contentType: string | null): string {
  let data: unknown;
  if (text !== '' && (/^\s*[[{"]/.test(text) || (contentType ?? '').includes('json'))) {
    try {
      data = JSON.parse(text) as unknown;
    } catch {
      data = undefined;
    }
  }
  return new ProxyError({ status, method, url: path, data, rawBody: text }).ref;
}

async function waitFor<T>(find: () => T | undefined, ms = 2_000): Promise<T | undefined> {
  const end = Date.now() + ms;
  for (;;) {
    const found = find();
    if (found !== undefined || Date.now() > end) return found;
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** The completion line of the request answered with `headers` (its `X-Request-Id`). */
async function logLineOf(logs: LogCapture, headers: Headers): Promise<Record<string, unknown>> {
  const id = headers.get('x-request-id');
  assert.ok(id, 'the answer names its request');
  const line = await waitFor(() => logs.entries.find((e) => e.reqId === id && typeof e.statusCode === 'number'));
  assert.ok(line, `a log line for request ${id}`);
  return line;
}

/**
 * The answer failed, its `X-Error-Ref` is `expected`, equal to the SDK's reference and to
 * `classifyError` of what was received, and the log line carries it as `ref`.
 */
async function assertRef(seen: Seen, logs: LogCapture, expected: string): Promise<void> {
  assert.ok(seen.error, `the SDK saw a failure (status ${seen.status})`);
  const header = seen.headers.get('x-error-ref');
  assert.equal(header, seen.error.ref, 'the header is the reference the SDK computed');
  assert.equal(header, expected);
  const again = classifyError({
    status: seen.status,
    data: seen.error.body,
    rawBody: seen.text,
    url: seen.error.url,
    method: seen.error.method,
  });
  assert.equal(again.ref, header);
  assert.equal((await logLineOf(logs, seen.headers)).ref, header, 'the log line carries the reference');
}

test('no session cookie on an authenticated route: 401 no_token carries EP0702-EM0001', async () => {
  const seen = await viaSdk(proxy.url, 'GET', '/api/auth/profile');
  assert.equal(seen.status, 401);
  assert.deepEqual(JSON.parse(seen.text), { reason: 'no_token' });
  await assertRef(seen, proxy.logs, 'EP0702-EM0001');
  assert.equal(upstream.requests.length, 0);
});

test('an upstream 401 passed through byte for byte carries the reference of its reason', async () => {
  const body = ' {"reason":"wrong_token","message":"nope"}\n';
  upstream.on('GET', '/auth/user-profile', { status: 401, text: body, headers: { 'content-type': 'application/json' } });
  const seen = await viaSdk(proxy.url, 'GET', '/api/auth/profile', { token: fakeJwt() });
  assert.equal(seen.status, 401);
  assert.equal(seen.text, body, 'byte for byte');
  await assertRef(seen, proxy.logs, 'EP0702-EM0002');
});

test('an upstream 403 with an HTML body carries EM0011', async () => {
  upstream.on('GET', '/auth/user-profile', { status: 403, text: '<html>Forbidden</html>', headers: { 'content-type': 'text/html' } });
  const seen = await viaSdk(proxy.url, 'GET', '/api/auth/profile', { token: fakeJwt() });
  assert.equal(seen.status, 403);
  assert.equal(seen.text, '<html>Forbidden</html>');
  await assertRef(seen, proxy.logs, 'EP0702-EM0011');
});

test('an upstream 503 answers the envelope with EM0032', async () => {
  upstream.on('GET', '/auth/user-profile', { status: 503, json: { message: 'maintenance' } });
  const seen = await viaSdk(proxy.url, 'GET', '/api/auth/profile', { token: fakeJwt() });
  assert.equal(seen.status, 503);
  assert.equal((JSON.parse(seen.text) as { ok: boolean }).ok, false);
  await assertRef(seen, proxy.logs, 'EP0702-EM0032');
});

test('an upstream that does not answer in time: 504 upstream_timeout', async () => {
  upstream.on('GET', '/auth/user-profile', { status: 200, json: { user: {} }, delayMs: TIMEOUT_MS * 4 });
  const seen = await viaSdk(slowProxy.url, 'GET', '/api/auth/profile', { token: fakeJwt() });
  assert.equal(seen.status, 504);
  assert.equal((JSON.parse(seen.text) as { error: string }).error, 'upstream_timeout');
  await assertRef(seen, slowProxy.logs, 'EP0702-EM0032');
});

test('an upstream that resets the connection: 502 upstream_unavailable', async () => {
  upstream.on('GET', '/auth/user-profile', (_req, res) => res.socket?.destroy());
  const seen = await viaSdk(proxy.url, 'GET', '/api/auth/profile', { token: fakeJwt() });
  assert.equal(seen.status, 502);
  await assertRef(seen, proxy.logs, 'EP0702-EM0032');
});

test('an invalid body: 400 invalid_request, nothing upstream', async () => {
  const seen = await viaSdk(proxy.url, 'POST', '/api/user/check-password', { token: fakeJwt(), body: { password: 42 } });
  assert.equal(seen.status, 400);
  assert.equal((JSON.parse(seen.text) as { error: string }).error, 'invalid_request');
  await assertRef(seen, proxy.logs, 'EP0712-EM0099');
  assert.equal(upstream.requests.length, 0);
});

test('a foreign Origin on a state-changing request: 403 csrf_rejected', async () => {
  const seen = await viaSdk(proxy.url, 'POST', '/api/user/check-password', {
    token: fakeJwt(),
    body: { password: 'x' },
    headers: { origin: 'https://evil.example' },
  });
  assert.equal(seen.status, 403);
  assert.equal((JSON.parse(seen.text) as { error: string }).error, 'csrf_rejected');
  await assertRef(seen, proxy.logs, 'EP0712-EM0011');
});

test('an unknown /api path: 404 not_found', async () => {
  const seen = await viaSdk(proxy.url, 'GET', '/api/no/such/route?x=1');
  assert.equal(seen.status, 404);
  await assertRef(seen, proxy.logs, 'EP0799-EM0099');
});

test("415, 413 and the router's 400 carry the reference the SDK computes", async () => {
  const cases = [
    { method: 'POST', path: '/api/user/check-password', body: 'password=x', type: 'text/plain', status: 415, ref: 'EP0712-EM0099' },
    {
      method: 'POST',
      path: '/api/user/check-password',
      body: JSON.stringify({ password: 'x'.repeat(1_100_000) }),
      type: 'application/json',
      status: 413,
      ref: 'EP0712-EM0099',
    },
    { method: 'GET', path: `/api/games/category/${'a'.repeat(300)}`, status: 400, ref: 'EP0717-EM0099' },
  ];
  for (const c of cases) {
    const headers: Record<string, string> = c.type ? { 'content-type': c.type } : {};
    const res = await send(proxy.url, c.method, c.path, { token: fakeJwt(), body: c.body, headers });
    assert.equal(res.status, c.status, c.path.slice(0, 40));
    const header = res.headers.get('x-error-ref');
    assert.equal(header, sdkRefOf(c.method, c.path, res.status, res.text, res.headers.get('content-type')));
    assert.equal(header, c.ref);
    assert.equal((await logLineOf(proxy.logs, res.headers)).ref, c.ref);
  }
});

test('success answers carry no X-Error-Ref and their log line no ref', async () => {
  upstream.on('GET', '/auth/user-profile', { status: 200, json: { user: { id: 1 } } });
  const seen = await viaSdk(proxy.url, 'GET', '/api/auth/profile', { token: fakeJwt() });
  assert.equal(seen.status, 200);
  assert.equal(seen.error, undefined);
  assert.equal(seen.headers.get('x-error-ref'), null);
  assert.equal('ref' in (await logLineOf(proxy.logs, seen.headers)), false);
  const version = await send(proxy.url, 'GET', '/api/version');
  assert.equal(version.status, 200);
  assert.equal(version.headers.get('x-error-ref'), null);
});

/** Writes `request` on a fresh socket and returns everything answered until the server closes it. */
function raw(base: string, request: string): Promise<string> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.end(request));
    let out = '';
    socket.setTimeout(5_000, () => socket.destroy(new Error('raw request timed out')));
    socket.on('data', (chunk: Buffer) => {
      out += chunk.toString('latin1');
    });
    socket.on('close', () => resolve(out));
    socket.on('error', reject);
  });
}

function splitAnswer(text: string): { status: number; headers: Map<string, string>; body: string } {
  const [head = '', ...rest] = text.split('\r\n\r\n');
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers = new Map<string, string>();
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  return { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(statusLine)?.[1] ?? 0), headers, body: rest.join('\r\n\r\n') };
}

test('answers written on the raw socket (431, malformed) carry the reference, and one log line each', async () => {
  const big = splitAnswer(await raw(proxy.url, `GET /api/auth/profile HTTP/1.1\r\nHost: x\r\nCookie: a=${'x'.repeat(20_000)}\r\n\r\n`));
  assert.equal(big.status, 431);
  assert.equal(big.headers.get('x-error-ref'), 'EP0702-EM0099');
  assert.equal(
    big.headers.get('x-error-ref'),
    sdkRefOf('GET', '/api/auth/profile', 431, big.body, big.headers.get('content-type') ?? null),
  );
  const bad = splitAnswer(await raw(proxy.url, 'GARBAGE\r\n\r\n'));
  assert.equal(bad.status, 400);
  // No request line: the URL is unknown (EP0000), as the classifier says of an unknown URL.
  assert.equal(
    bad.headers.get('x-error-ref'),
    errorRefOf({ status: 400, method: undefined, url: undefined, contentType: 'application/json', body: bad.body }),
  );
  assert.equal(bad.headers.get('x-error-ref'), 'EP0000-EM0099');
  const refused = await waitFor(() => {
    const lines = proxy.logs.entries.filter((e) => e.msg === 'request refused' && e.reqId === undefined);
    return lines.length >= 2 ? lines : undefined;
  });
  assert.deepEqual(
    refused?.map((e) => [e.statusCode, e.ref]),
    [
      [431, 'EP0702-EM0099'],
      [400, 'EP0000-EM0099'],
    ],
  );
});

test("the drain's 503 shutting_down carries the reference", async () => {
  const own = await startProxy(upstream.url, { SHUTDOWN_DELAY_MS: '600', SHUTDOWN_TIMEOUT_MS: '2000' });
  const drained = own.app.drain();
  try {
    const res = await send(own.url, 'GET', '/readyz');
    assert.equal(res.status, 503);
    assert.equal((res.json as { error: string }).error, 'shutting_down');
    assert.equal(res.headers.get('x-error-ref'), sdkRefOf('GET', '/readyz', 503, res.text, res.headers.get('content-type')));
    assert.equal(res.headers.get('x-error-ref'), 'EP0000-EM0032');
  } finally {
    await drained;
  }
});

test('a body too slow to arrive: the 408 written on the raw socket names the route the request was for', async () => {
  const own = await startProxy(upstream.url, {}, { timeouts: { requestTimeoutMs: 800, headersTimeoutMs: 800, checkIntervalMs: 100 } });
  try {
    const request =
      `POST /api/user/check-password HTTP/1.1\r\nHost: x\r\nCookie: access_token=${fakeJwt()}\r\n` +
      'Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"pa';
    const { hostname, port } = new URL(own.url);
    const text = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(port), hostname, () => socket.write(request));
      let out = '';
      socket.setTimeout(5_000, () => socket.destroy(new Error('no answer')));
      socket.on('data', (chunk: Buffer) => {
        out += chunk.toString('latin1');
      });
      socket.on('close', () => resolve(out));
      socket.on('error', reject);
    });
    const answer = splitAnswer(text);
    assert.equal(answer.status, 408);
    assert.equal(
      answer.headers.get('x-error-ref'),
      sdkRefOf('POST', '/api/user/check-password', 408, answer.body, answer.headers.get('content-type') ?? null),
    );
    assert.equal(answer.headers.get('x-error-ref'), 'EP0712-EM0099');
    const line = await waitFor(() => own.logs.entries.find((e) => e.msg === 'request refused'));
    assert.equal(line?.ref, 'EP0712-EM0099');
  } finally {
    await own.close();
  }
});
