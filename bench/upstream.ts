/**
 * The fast upstream of the benchmark: a plain `node:http` server that answers every path with a
 * fixed ~1 KB JSON body, the way a quick BFF would. It refuses with 401 any request without both
 * `Authorization: Bearer …` and a `Cookie` header, except for the anonymous catalogue paths
 * (`/casino-games…`), which the proxy fills its shared cache from without credentials. It also
 * serves `GET /auth/user-profile` (a small profile with `user.id`) and `POST /wallet/add-credit` (a
 * deposit result with a real wallet), and counts the calls it receives per path.
 *
 * Control endpoints, never proxied: `GET /__bench/calls` answers the counts
 * (`{ byPath, anonymous, unauthorized }`), `POST /__bench/reset` sets them to zero.
 *
 * Run as a child process, compiled to JavaScript by `compile.ts`: `node upstream.mjs [port]`;
 * the first line on standard output is `{"port":N}`.
 *
 * @module
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { type Listening, listenOnLoopback, runAsScript } from './serve.js';

/** The user id of the profile the upstream serves (a deposit must name it). */
export const BENCH_USER_ID = 4242;

/** Paths answered without credentials (the anonymous catalogue reads). */
export const PUBLIC_PREFIXES = ['/casino-games', '/bff/games/top-wins-dl', '/bff/games/statistics-dl'] as const;

function games(count: number): object[] {
  const out: object[] = [];
  for (let i = 0; i < count; i++) {
    out.push({ id: 1000 + i, slug: `game-${i}`, name: `Game ${i}`, provider: 'studio', rtp: 96.5, hot: i % 2 === 0 });
  }
  return out;
}

/** Pads a JSON object with a `note` field until it serialises to about `size` bytes. */
function sized(value: Record<string, unknown>, size: number): Buffer {
  const base = JSON.stringify({ ...value, note: '' });
  const pad = Math.max(0, size - Buffer.byteLength(base));
  return Buffer.from(JSON.stringify({ ...value, note: 'x'.repeat(pad) }));
}

/** The ~1 KB JSON body of ordinary answers. */
export const PAYLOAD = sized({ ok: true, data: games(8), page: 1, total: 8 }, 1024);
const PROFILE = Buffer.from(
  JSON.stringify({
    user: { id: BENCH_USER_ID, name: 'Bench User', email: 'bench@example.com', currency: 'BRL' },
    userInfo: { verified: true, country: 'BR' },
  }),
);
const DEPOSIT = sized(
  {
    transaction_id: 'tx-0001',
    status: 'pending',
    payment_method: 'pix',
    qr_code: '00020126580014br.gov.bcb.pix',
    real_wallet: { id: 1, currency: 'BRL', balance: 155001 },
  },
  1024,
);
const NO_TOKEN = Buffer.from('{"reason":"no_token"}');
const JSON_TYPE = 'application/json; charset=utf-8';

function answer(res: ServerResponse, status: number, body: Buffer): void {
  res.writeHead(status, { 'content-type': JSON_TYPE, 'content-length': body.length });
  res.end(body);
}

/** Counts of the calls received since the last reset. */
export interface UpstreamCalls {
  byPath: Record<string, number>;
  /** Calls without both credentials (public paths included). */
  anonymous: number;
  /** Calls refused with 401. */
  unauthorized: number;
}

/**
 * Starts the upstream on loopback.
 * @param port - listen port; `0` (default) picks a free one.
 * @returns the chosen port and a `close()`.
 */
export async function startUpstream(port = 0): Promise<Listening> {
  let byPath = new Map<string, number>();
  let anonymous = 0;
  let unauthorized = 0;

  const handle = (req: IncomingMessage, res: ServerResponse, path: string): void => {
    if (path.startsWith('/__bench/')) {
      if (path === '/__bench/reset') {
        byPath = new Map();
        anonymous = 0;
        unauthorized = 0;
        answer(res, 200, Buffer.from('{"ok":true}'));
        return;
      }
      const calls: UpstreamCalls = { byPath: Object.fromEntries(byPath), anonymous, unauthorized };
      answer(res, 200, Buffer.from(JSON.stringify(calls)));
      return;
    }
    byPath.set(path, (byPath.get(path) ?? 0) + 1);
    const authorization = req.headers.authorization;
    const authenticated = authorization?.startsWith('Bearer ') === true && req.headers.cookie !== undefined;
    if (!authenticated) {
      anonymous++;
      if (!PUBLIC_PREFIXES.some((prefix) => path.startsWith(prefix))) {
        unauthorized++;
        answer(res, 401, NO_TOKEN);
        return;
      }
    }
    if (path === '/auth/user-profile') answer(res, 200, PROFILE);
    else if (path === '/wallet/add-credit') answer(res, 200, DEPOSIT);
    else answer(res, 200, PAYLOAD);
  };

  const server = createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    if (req.method === 'GET' || req.method === 'HEAD') {
      handle(req, res, path);
      return;
    }
    // Bodies are read to the end before answering, as a real service would.
    req.on('data', () => {});
    req.on('end', () => handle(req, res, path));
  });
  return listenOnLoopback(server, port);
}

await runAsScript(import.meta.url, startUpstream);
