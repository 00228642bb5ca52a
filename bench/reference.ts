/**
 * The reference proxy of the benchmark: the least a Node.js proxy can do for an authenticated
 * passthrough. A plain `node:http` server reads the session cookie, answers 401 `{"reason":"no_token"}`
 * without it, and otherwise calls the upstream through one undici `Pool` with keep-alive, sending
 * `Authorization: Bearer <jwt>` and the incoming `Cookie`; it buffers the small answer and sends it
 * with a known `Content-Length`. No framework, no logging, no validation: the yardstick the real
 * proxy is measured against.
 *
 * `POST /api/payments/deposit` is the least a Node.js proxy can do for a deposit (spec 2.7): read and
 * parse the JSON body, check the DepositPayload's required fields, map it to the snake_case wire body,
 * `POST /wallet/add-credit` with the session, parse the answer, give the real wallet's `balance` in
 * currency units, serialise it. No profile lookup, no double-submit guard, no attribution cookies:
 * the floor of the deposit row.
 *
 * Run as a child process, compiled to JavaScript by `compile.ts`: `node reference.mjs <upstream-origin> <upstream-path> <cookie-name>`;
 * the first line on standard output is `{"port":N}`.
 *
 * @module
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';

const [origin = 'http://127.0.0.1:1', upstreamPath = '/', cookieName = '__Host-access_token'] = process.argv.slice(2);
const NO_TOKEN = Buffer.from('{"reason":"no_token"}');
const BAD_GATEWAY = Buffer.from('{"ok":false,"error":"upstream_unavailable","detail":"The service is unavailable"}');
const JSON_TYPE = 'application/json; charset=utf-8';
const prefix = `${cookieName}=`;
const DEPOSIT_PATH = '/api/payments/deposit';
const BAD_REQUEST = Buffer.from('{"ok":false,"error":"invalid_request","detail":"The body is not a DepositPayload"}');
/** DepositPayload fields (client name → wire name) the reference forwards. */
const WIRE_NAMES: [string, string][] = [
  ['userId', 'user_id'],
  ['creditAmount', 'credit_amount'],
  ['paymentMethod', 'payment_method'],
  ['currency', 'currency'],
  ['couponCode', 'coupon_code'],
  ['utmCampaign', 'utm_campaign'],
  ['utmSource', 'utm_source'],
  ['utmMedium', 'utm_medium'],
  ['utmContent', 'utm_content'],
];

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
  if (req.method === 'POST' && req.url === DEPOSIT_PATH) {
    deposit(req, res, token, cookie);
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

function send(res: ServerResponse, status: number, body: Buffer | string): void {
  res.writeHead(status, { 'content-type': JSON_TYPE, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/** The DepositPayload's wire body, or `undefined` when a required field is missing or of the wrong type. */
function depositWire(payload: unknown): Record<string, unknown> | undefined {
  if (!payload || typeof payload !== 'object') return undefined;
  const p = payload as Record<string, unknown>;
  if (typeof p.userId !== 'number' || !Number.isInteger(p.creditAmount) || (p.creditAmount as number) <= 0) return undefined;
  if (typeof p.paymentMethod !== 'string' || typeof p.currency !== 'string') return undefined;
  const wire: Record<string, unknown> = {};
  for (const [client, name] of WIRE_NAMES) if (p[client] !== undefined) wire[name] = p[client];
  return wire;
}

function deposit(req: IncomingMessage, res: ServerResponse, token: string, cookie: string): void {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    let wire: Record<string, unknown> | undefined;
    try {
      wire = depositWire(JSON.parse(Buffer.concat(chunks).toString('utf8')));
    } catch {
      wire = undefined;
    }
    if (!wire) {
      send(res, 400, BAD_REQUEST);
      return;
    }
    pool
      .request({
        method: 'POST',
        path: '/wallet/add-credit',
        headers: { accept: 'application/json', 'content-type': 'application/json', authorization: `Bearer ${token}`, cookie },
        body: JSON.stringify(wire),
      })
      .then(async (upstream) => {
        const answer = (await upstream.body.json()) as Record<string, unknown>;
        const wallet = answer.real_wallet as Record<string, unknown> | undefined;
        if (wallet && typeof wallet.balance === 'number') {
          answer.real_wallet = { ...wallet, balance: wallet.balance / 100, balance_cents: wallet.balance };
        }
        send(res, upstream.statusCode, JSON.stringify(answer));
      })
      .catch(() => send(res, 502, BAD_GATEWAY));
  });
}

server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ port: (server.address() as AddressInfo).port })}\n`);
});
const stop = () => {
  server.closeAllConnections();
  server.close(() => void pool.close().then(() => process.exit(0)));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
