/**
 * The process entry point (`npm start`): reads the environment once, builds the app, listens, and
 * shuts down gracefully on SIGTERM/SIGINT (stop accepting, finish in-flight requests, close upstream
 * pools). With `WORKERS` > 1 a node:cluster primary starts that many workers. The only file that
 * touches `process.env`.
 *
 * @module
 */
import cluster from 'node:cluster';
import { createServer } from './app.js';
import { ConfigError, loadConfig } from './config.js';
import { sandboxBanner } from './sandbox/index.js';

/** Longest wait for in-flight requests after a stop signal, in milliseconds, beyond the upstream limit. */
const SHUTDOWN_GRACE_EXTRA_MS = 5_000;

async function main(): Promise<void> {
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig(process.env);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }

  if (config.workers > 1 && cluster.isPrimary) {
    for (let i = 0; i < config.workers; i++) cluster.fork();
    let stopping = false;
    cluster.on('exit', (worker, code) => {
      if (!stopping) {
        process.stderr.write(`worker ${worker.process.pid} exited with ${code}; starting another\n`);
        cluster.fork();
      }
    });
    const stop = () => {
      stopping = true;
      for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGTERM');
    };
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
    return;
  }

  const app = await createServer(config);
  process.on('unhandledRejection', (reason) => {
    app.log.error({ err: reason }, 'unhandled promise rejection');
  });

  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info({ signal }, 'shutting down: no new connections, finishing in-flight requests');
    const timer = setTimeout(() => {
      app.log.error('grace period over; exiting with requests still open');
      process.exit(1);
    }, config.upstreamTimeoutMs + SHUTDOWN_GRACE_EXTRA_MS);
    timer.unref();
    app.close().then(
      () => process.exit(0),
      (error: unknown) => {
        app.log.error({ err: error }, 'error while closing');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));

  // One banner (the sandbox and its demo logins), then Fastify's own listening line with our text.
  if (app.sandboxUrls) {
    app.log.info({ sandbox: app.sandboxUrls }, sandboxBanner(app.sandboxUrls, 'no BFF_BASE_URL: the embedded sandbox serves every upstream'));
  }
  const docs = config.production ? '' : ' (API reference: /docs)';
  await app.listen({ port: config.port, host: config.host, listenTextResolver: (address) => `front proxy listening on ${address}${docs}` });
}

main().catch((error: unknown) => {
  process.stderr.write(`failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
