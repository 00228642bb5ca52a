/**
 * Requests refused by Node's HTTP parser (headers over 16 KiB, malformed request lines) answer the
 * envelope of spec 7.4 too, not the framework's own body.
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
