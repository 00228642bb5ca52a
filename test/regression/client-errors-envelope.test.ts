/**
 * Requests refused by Node's HTTP parser (headers over 16 KiB, malformed request lines) answer the
 * envelope of spec 7.4 too, not the framework's own body; so do the protocol edges the parser lets
 * through: a request line without an HTTP version (HTTP/0.9 style, also out of a bare LF) and an
 * HTTP/1.1 request without `Host`.
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { test } from 'node:test';
import { useProxyWithRecorder } from '../helpers/recording-upstream.js';

const { upstream, proxy } = useProxyWithRecorder();

function raw(base: string, request: string): Promise<string> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.end(request));
    let out = '';
    socket.on('data', (chunk: Buffer) => {
      out += chunk.toString('latin1');
    });
    socket.on('close', () => resolve(out));
    socket.on('error', reject);
  });
}

test('headers over 16 KiB → 431 envelope; a malformed request → 400 envelope; nothing upstream', async () => {
  const big = await raw(proxy.url, `GET /api/auth/profile HTTP/1.1\r\nHost: x\r\nCookie: a=${'x'.repeat(20_000)}\r\n\r\n`);
  assert.match(big, /^HTTP\/1\.1 431 /);
  assert.match(big, /\{"ok":false,"error":"headers_too_large","detail":"[^"]+"\}$/);
  const bad = await raw(proxy.url, 'GARBAGE\r\n\r\n');
  assert.match(bad, /^HTTP\/1\.1 400 /);
  assert.match(bad, /"error":"invalid_request"/);
  assert.equal(upstream.requests.length, 0);
});

test('protocol edges: no HTTP version, a bare LF in the request line, HTTP/1.1 without Host → 400 envelope with X-Error-Ref; nothing upstream', async () => {
  for (const [label, request] of [
    ['a request line without a version', 'GET /api/version\r\n\r\n'],
    ['a request line without a version, with a Host', 'GET /api/version\r\nHost: x\r\n\r\n'],
    ['a bare LF inside the request line', 'GET /api/ver\nsion\r\n\r\n'],
    ['a bare LF ending a line without a version, then a header', 'GET /api/version\nX-A: b\r\n\r\n'],
    ['a bare LF inside the target, with a version', 'GET /api/ver\nsion HTTP/1.1\r\nHost: x\r\n\r\n'],
    ['HTTP/1.1 without Host', 'GET /api/version HTTP/1.1\r\nConnection: close\r\n\r\n'],
    ['HTTP/1.1 without Host, on a session route', 'GET /api/auth/profile HTTP/1.1\r\nCookie: access_token=x\r\n\r\n'],
  ] as const) {
    const out = await raw(proxy.url, request);
    assert.match(out, /^HTTP\/1\.1 400 /, `${label}: ${JSON.stringify(out.slice(0, 40))}`);
    assert.match(out, /\r\nx-error-ref: EP\d{4}-EM\d{4}\r\n/i, `${label}: X-Error-Ref`);
    assert.match(out, /\{"ok":false,"error":"invalid_request","detail":"[^"]+"\}$/, `${label}: the envelope`);
    assert.doesNotMatch(out, /buildId/, `${label}: not answered`);
  }
  // HTTP/1.0 may omit Host (RFC 9112 §3.2): still answered.
  assert.match(await raw(proxy.url, 'GET /api/version HTTP/1.0\r\n\r\n'), /^HTTP\/1\.1 200 /);
  assert.equal(upstream.requests.length, 0);
});
