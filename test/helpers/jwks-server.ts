/**
 * Test helper: a JWKS server on a loopback port (node:http) whose behaviour a test changes while the
 * proxy runs: it answers the key set of each path, hangs (accepts the request and never answers),
 * resets the connection, answers an error status, or stops listening (connections refused) and listens
 * again on the same port. Every request is counted per path.
 */
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { KeyObject } from 'node:crypto';
import { exportJWK, type JWK } from 'jose';

/** What the server does with the next requests. */
export type JwksMode = 'answer' | 'hang' | 'reset' | 'error';

export interface JwksServer {
  /** `http://127.0.0.1:<port>`. */
  readonly origin: string;
  /** Requests received, per path. */
  readonly fetches: Map<string, number>;
  /** Requests of `path` received so far. */
  fetchesOf(path: string): number;
  /** Publishes `keys` at `path` (replacing what it held: a rotation). */
  publish(path: string, keys: JWK[]): void;
  /** Requests held unanswered now (`hang`). */
  readonly hanging: number;
  /** How the next requests are handled (`answer` by default). */
  mode: JwksMode;
  /** Stops listening: new connections are refused until {@link resume}. */
  refuse(): Promise<void>;
  /** Listens again on the same port. */
  resume(): Promise<void>;
  close(): Promise<void>;
}

/** The public JWK of `key`, with its `kid` (and `alg` when given). */
export async function publicJwk(key: KeyObject, kid: string, alg?: string): Promise<JWK> {
  return { ...(await exportJWK(key)), kid, use: 'sig', ...(alg === undefined ? {} : { alg }) };
}

/** Starts a JWKS server on 127.0.0.1 and a free port. */
export async function startJwksServer(): Promise<JwksServer> {
  const sets = new Map<string, JWK[]>();
  const fetches = new Map<string, number>();
  const hanging = new Set<ServerResponse>();
  const server = createServer((req, res) => {
    const path = req.url ?? '';
    fetches.set(path, (fetches.get(path) ?? 0) + 1);
    if (jwks.mode === 'hang') {
      hanging.add(res);
      res.on('close', () => hanging.delete(res));
      return;
    }
    if (jwks.mode === 'reset') {
      req.socket.destroy();
      return;
    }
    const keys = sets.get(path);
    if (jwks.mode === 'error' || keys === undefined) {
      res.writeHead(jwks.mode === 'error' ? 503 : 404, { 'content-type': 'text/plain' }).end('no');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const stop = () =>
    new Promise<void>((resolve) => {
      for (const res of hanging) res.destroy();
      hanging.clear();
      server.closeAllConnections();
      server.close(() => resolve());
    });
  const jwks: JwksServer = {
    origin: `http://127.0.0.1:${port}`,
    fetches,
    fetchesOf: (path) => fetches.get(path) ?? 0,
    publish: (path, keys) => void sets.set(path, keys),
    get hanging() {
      return hanging.size;
    },
    mode: 'answer',
    refuse: stop,
    resume: () => new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve)),
    close: async () => {
      if (server.listening) await stop();
    },
  };
  return jwks;
}
