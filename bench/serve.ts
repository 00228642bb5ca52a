/**
 * What the bench's own loopback servers (`upstream.ts`, `collector.ts`) share: listening on
 * 127.0.0.1 with a `close()` that ends kept-alive connections, and running as a child process that
 * prints its port and stops on SIGTERM or SIGINT.
 *
 * @module
 */
import { realpathSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';

/** A server listening on loopback. */
export interface Listening {
  /** The port it listens on. */
  port: number;
  /** Closes every connection (kept-alive ones included) and the listener. */
  close(): Promise<void>;
}

/**
 * Listens on 127.0.0.1.
 * @param port - listen port; `0` picks a free one.
 */
export async function listenOnLoopback(server: Server, port: number): Promise<Listening> {
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * When the module at `moduleUrl` is the process's entry point (`node <script>.mjs [port]`): starts
 * it on the port of the first argument (default a free one), writes `{"port":N}` as the first line
 * of standard output, and closes and exits on SIGTERM or SIGINT. Does nothing when imported.
 */
export async function runAsScript(moduleUrl: string, start: (port: number) => Promise<Listening>): Promise<void> {
  // Node.js gives a module the real path of its file: the entry point's argument may reach it through a
  // symbolic link (a `node_modules` linked from another checkout).
  if (!process.argv[1] || moduleUrl !== pathToFileURL(realpathSync(process.argv[1])).href) return;
  const { port, close } = await start(Number(process.argv[2] ?? 0));
  process.stdout.write(`${JSON.stringify({ port })}\n`);
  const stop = () => void close().then(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
