/**
 * The reference proxy of the benchmark: the least a Node.js proxy can do for an authenticated
 * passthrough. A plain `node:http` server reads the session cookie, answers 401 `{"reason":"no_token"}`
 * without it, and otherwise calls the upstream through one undici `Pool` with keep-alive, sending
 * `Authorization: Bearer <jwt>` and the incoming `Cookie`; it buffers the small answer and sends it
 * with a known `Content-Length`. No framework, no logging, no validation: the yardstick the real
 * proxy is measured against.
 *
 * Run as a child process, compiled to JavaScript by `compile.ts`: `node reference.mjs <upstream-origin> <upstream-path> <cookie-name>`;
 * the first line on standard output is `{"port":N}`.
 *
 * @module
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';

const [origin = 'http://127.0.0.1:1', upstreamPath = '/', cookieName = '__Host-access_token'] = process.argv.slice(2);
const NO_TOKEN = Buffer.from('{"reason":"no_token"}');
const BAD_GATEWAY = Buffer.from('{"ok":false,"error":"upstream_unavailable","detail":"The service is unavailable"}');
const JSON_TYPE = 'application/json; charset=utf-8';
const prefix = `${cookieName}=`;

/** The value of the session cookie in a `Cookie` header, or `undefined`. */
function sessionToken(header: string | undefined): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const item = part.trim();
    if (item.startsWith(prefix)) return item.slice(prefix.length) || undefined;
  }
  return undefined;
}

const pool = new Pool(origin, { connections: 128, pipelining: 1, keepAliveTimeout: 4_000 });

const server = createServer({ keepAliveTimeout: 5_000 }, (req, res) => {
  const cookie = req.headers.cookie;
  const token = sessionToken(cookie);
  if (token === undefined || cookie === undefined) {
    res.writeHead(401, { 'content-type': JSON_TYPE, 'content-length': NO_TOKEN.length });
    res.end(NO_TOKEN);
    return;
  }
  pool
    .request({
      method: 'GET',
      path: upstreamPath,
      headers: { accept: 'application/json', authorization: `Bearer ${token}`, cookie },
    })
    .then(async (upstream) => {
      const chunks: Buffer[] = [];
      for await (const chunk of upstream.body) chunks.push(chunk as Buffer);
      const body = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
      res.writeHead(upstream.statusCode, { 'content-type': JSON_TYPE, 'content-length': body.length });
      res.end(body);
    })
    .catch(() => {
      res.writeHead(502, { 'content-type': JSON_TYPE, 'content-length': BAD_GATEWAY.length });
      res.end(BAD_GATEWAY);
    });
});

server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ port: (server.address() as AddressInfo).port })}\n`);
});
const stop = () => {
  server.closeAllConnections();
  server.close(() => void pool.close().then(() => process.exit(0)));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
