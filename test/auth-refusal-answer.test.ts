/**
 * The auth gate's 401 on the wire, over real sockets (docs/behaviour.md "Which routes need a
 * session", "Error envelope"; spec 7.3): a request without the session cookie, or with one that is
 * not a well-formed JWT, gets the header lines of every error answer in their order (`X-Request-Id`,
 * `nosniff`, `no-store`, the JSON type, `X-Error-Ref`, `Content-Length`), the body byte for byte, its
 * completion line with the reference, and `front_proxy_http_request_duration_seconds` counted under
 * the route's pattern and 401; nothing reaches the upstream. A `HEAD` and an absolute-form target
 * (whose reference is classified from the answer, not remembered per route) carry the same headers.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { rawRequest } from './helpers/raw-http.js';
import { type RecordingUpstream, startProxy, startRecordingUpstream, type TestProxy } from './helpers/recording-upstream.js';

const ROUTE = '/api/user/last-casino-games';

let upstream: RecordingUpstream;
let proxy: TestProxy;

before(async () => {
  upstream = await startRecordingUpstream();
  proxy = await startProxy(upstream.url, { METRICS_PORT: '0' });
});
after(async () => {
  await proxy.close();
  await upstream.close();
});

/** The header lines of a raw answer without its status line and `Date`, the request id's value as a placeholder. */
function headerLines(head: string): string[] {
  return head
    .split('\r\n')
    .slice(1)
    .filter((line) => !/^date:/i.test(line))
    .map((line) => line.replace(/^(x-request-id): [0-9a-f-]{36}$/i, '$1: <id>'));
}

/** The lines every 401 of the gate has, with its reference and body length. */
const lines = (ref: string, length: number) => [
  'x-request-id: <id>',
  'x-content-type-options: nosniff',
  'cache-control: no-store',
  'content-type: application/json; charset=utf-8',
  `x-error-ref: ${ref}`,
  `content-length: ${length}`,
  'Connection: close',
];

test(
  "the gate's 401: the header lines, the body, the log line and the request metrics, a HEAD and an absolute-form target alike",
  { timeout: 30_000 },
  async () => {
    const NO_TOKEN = '{"reason":"no_token"}';
    const INVALID = '{"reason":"invalid_token"}';
    const cases: { name: string; method: string; target: string; headers?: Record<string, string>; body: string; ref: RegExp }[] = [
      { name: 'no cookie', method: 'GET', target: ROUTE, body: NO_TOKEN, ref: /^EP0712-EM0001$/ },
      { name: 'no cookie, a query', method: 'GET', target: `${ROUTE}?page=2`, body: NO_TOKEN, ref: /^EP0712-EM0001$/ },
      {
        name: 'a cookie that is no JWT',
        method: 'GET',
        target: ROUTE,
        headers: { cookie: `${proxy.app.deps.config.sessionCookieName}=not-a-jwt` },
        body: INVALID,
        ref: /^EP0712-EM\d{4}$/,
      },
      {
        name: 'another cookie only',
        method: 'GET',
        target: ROUTE,
        headers: { cookie: 'theme=dark' },
        body: NO_TOKEN,
        ref: /^EP0712-EM0001$/,
      },
      // A HEAD (no body) and an absolute-form target (its reference classified from the answer): the same headers.
      { name: 'HEAD, no cookie', method: 'HEAD', target: ROUTE, body: '', ref: /^EP0712-EM\d{4}$/ },
      { name: 'absolute-form target', method: 'GET', target: `${proxy.url}${ROUTE}`, body: NO_TOKEN, ref: /^EP\d{4}-EM0001$/ },
    ];
    for (const c of cases) {
      const before = proxy.logs.lines.length;
      const answer = await rawRequest(proxy.url, c.method, c.target, c.headers);
      assert.equal(answer.status, 401, c.name);
      assert.equal(answer.body, c.body, c.name);
      const got = headerLines(answer.headers);
      const ref = /^x-error-ref: (.*)$/m.exec(got.join('\n'))?.[1] ?? '';
      assert.match(ref, c.ref, c.name);
      assert.deepEqual(got, lines(ref, Buffer.byteLength(c.method === 'HEAD' ? NO_TOKEN : c.body)), c.name);
      // The completion line is written once the answer has gone: wait for it.
      for (let waited = 0; proxy.logs.lines.length === before && waited < 2_000; waited += 10) await new Promise((r) => setTimeout(r, 10));
      const written = proxy.logs.entries.slice(before).filter((e) => e.msg === 'request completed');
      assert.equal(written.length, 1, c.name);
      const line = written[0] as Record<string, unknown>;
      assert.deepEqual(
        { level: line.level, method: line.method, url: line.url, statusCode: line.statusCode, ref: line.ref },
        { level: 'info', method: c.method, url: c.target.split('?')[0], statusCode: 401, ref },
        c.name,
      );
      assert.equal(typeof line.ms, 'number', c.name);
      assert.match(String(line.reqId), /^[0-9a-f-]{36}$/, c.name);
    }
    // Counted under the route's pattern and the status, by method: every answer of the table once.
    const metrics = (await proxy.app.metrics?.registry.metrics()) ?? '';
    const series = metrics
      .split('\n')
      .filter((l) => l.startsWith('front_proxy_http_request_duration_seconds_count{') && l.includes(`"${ROUTE}"`) && l.includes('"401"'));
    assert.deepEqual(series.map((l) => l.replace(/^.*method="([A-Z]+)".*\} (\d+)$/, '$1 $2')).sort(), ['GET 5', 'HEAD 1'], metrics);
    assert.equal(upstream.requests.length, 0, 'nothing upstream');
  },
);
