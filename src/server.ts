/**
 * The process entry point (`npm start`) and the only file that touches `process.env`: it reads the
 * environment once (docs/configuration.md "Checks at start"), builds the app, listens, and drains on
 * SIGTERM/SIGINT (docs/operations.md "Drain: SIGTERM"). With `WORKERS` > 1 it is a node:cluster
 * primary: it starts the workers, replaces one that dies after a delay that doubles from 100 ms up to
 * 10 s while workers keep dying young (so that a crash loop does not spin), passes the stop signal on
 * and exits when they have. The metrics server (`METRICS_PORT`) runs in the only process or in the
 * primary, which sums the workers' metrics; the health listener (`HEALTH_PORT`) is pipeline/health.ts.
 *
 * @module
 */
import cluster from 'node:cluster';
import { createServer } from './app.js';
import { checkHostBindable, type Config, ConfigError, loadConfig } from './config.js';
import type { MetricsSource } from './pipeline/metrics-server.js';

/** Time allowed beyond `SHUTDOWN_DELAY_MS` + `SHUTDOWN_TIMEOUT_MS` for closing pools and flushing logs, in milliseconds. */
const EXIT_MARGIN_MS = 5_000;
/** First delay before a dead worker is replaced, in milliseconds; it doubles for each worker that dies young. */
const REFORK_MIN_MS = 100;
/** Longest delay before a dead worker is replaced, in milliseconds. */
const REFORK_MAX_MS = 10_000;
/** A worker that lived this long, in milliseconds, did not die young: the delay starts again from the minimum. */
const REFORK_RESET_AFTER_MS = 30_000;

/** Writes one line to standard error (before the logger exists, or in the cluster primary, which has none). */
function say(line: string): void {
  process.stderr.write(`${line}\n`);
}

/** Reads the configuration, or stops the process with one line per problem. */
async function configure(): Promise<Config> {
  let config: Config;
  try {
    config = loadConfig(process.env);
  } catch (error) {
    if (error instanceof ConfigError) {
      for (const problem of error.problems) say(problem);
      process.exit(1);
    }
    throw error;
  }
  // Workers inherit the primary's check.
  if (!cluster.isWorker) {
    const problem = await checkHostBindable(config.host);
    if (problem) {
      say(problem);
      process.exit(1);
    }
  }
  return config;
}

/**
 * Starts the metrics server on `METRICS_PORT` (docs/behaviour.md "Operations"), or stops the process when
 * the port cannot be bound.
 */
async function serveMetrics(config: Config, source: MetricsSource, log: (url: string) => void): Promise<void> {
  if (config.metricsPort === undefined) return;
  try {
    const { startMetricsServer } = await import('./pipeline/metrics-server.js');
    const { url } = await startMetricsServer(config.metricsPort, config.host, source);
    log(`${url}/metrics`);
  } catch (error) {
    say(`METRICS_PORT: cannot listen on ${config.host}:${config.metricsPort}: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  }
}

/** The cluster primary: starts the workers, replaces the ones that die, stops them all on a signal. */
async function runPrimary(config: Config): Promise<void> {
  // prom-client is loaded only with METRICS_PORT (it would also load the OpenTelemetry API).
  if (config.metricsPort !== undefined) {
    const { clusterMetricsSource } = await import('./pipeline/metrics-server.js');
    await serveMetrics(config, clusterMetricsSource(), (url) => say(`metrics of ${config.workers} workers on ${url}`));
  }
  const bornAt = new Map<number, number>();
  const refork = new Set<NodeJS.Timeout>();
  let youngDeaths = 0;
  let stopping = false;
  let failed = false;
  const fork = () => {
    const worker = cluster.fork();
    bornAt.set(worker.id, Date.now());
  };
  for (let i = 0; i < config.workers; i++) fork();

  cluster.on('exit', (worker, code, signal) => {
    const lived = Date.now() - (bornAt.get(worker.id) ?? 0);
    bornAt.delete(worker.id);
    if (stopping) {
      if (code !== 0) failed = true;
      if (bornAt.size === 0) process.exit(failed ? 1 : 0);
      return;
    }
    if (lived >= REFORK_RESET_AFTER_MS) youngDeaths = 0;
    const delay = Math.min(REFORK_MIN_MS * 2 ** youngDeaths, REFORK_MAX_MS);
    youngDeaths++;
    say(`worker ${worker.process.pid} exited with ${code ?? signal} after ${lived} ms; starting another in ${delay} ms`);
    const timer = setTimeout(() => {
      refork.delete(timer);
      fork();
    }, delay);
    refork.add(timer);
  });

  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    for (const timer of refork) clearTimeout(timer);
    say(`${signal}: stopping ${bornAt.size} workers`);
    if (bornAt.size === 0) process.exit(0);
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGTERM');
    setTimeout(
      () => {
        say('workers still running after the shutdown time; killing them');
        for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGKILL');
        process.exit(1);
      },
      config.shutdownDelayMs + config.shutdownTimeoutMs + EXIT_MARGIN_MS,
    ).unref();
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

/** One serving process (the only one, or a cluster worker). */
async function runServer(config: Config): Promise<void> {
  const worker = cluster.isWorker && config.metricsPort !== undefined;
  const answerClusterPrimary = worker ? (await import('./pipeline/metrics-server.js')).answerClusterPrimary : undefined;
  // Answer the primary's scrapes at once (with nothing until the app exists).
  answerClusterPrimary?.([]);
  const app = await createServer(config);
  if (app.metrics) {
    if (answerClusterPrimary) answerClusterPrimary([app.metrics.registry]);
    else await serveMetrics(config, app.metrics, (url) => app.log.info({ metrics: url }, `metrics on ${url}`));
  }
  process.on('unhandledRejection', (reason) => {
    app.log.error({ err: reason }, 'unhandled promise rejection');
  });

  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    app.log.info({ signal }, 'stop signal: draining');
    setTimeout(
      () => {
        app.log.error('still closing after the shutdown time; exiting');
        process.exit(1);
      },
      config.shutdownDelayMs + config.shutdownTimeoutMs + EXIT_MARGIN_MS,
    ).unref();
    app.drain().then(
      ({ cut }) => process.exit(cut > 0 ? 1 : 0),
      (error: unknown) => {
        app.log.error({ err: error }, 'error while closing');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));

  // One banner (the sandbox and its demo logins), then Fastify's own listening line with our text.
  if (app.sandboxUrls) {
    const { sandboxBanner } = await import('./sandbox/index.js');
    app.log.info(
      { sandbox: app.sandboxUrls },
      sandboxBanner(app.sandboxUrls, 'no BFF_BASE_URL: the embedded sandbox serves every upstream'),
    );
  }
  const docs = config.production ? '' : ' (API reference: /docs, playground: /playground)';
  await app.listen({ port: config.port, host: config.host, listenTextResolver: (address) => `front proxy listening on ${address}${docs}` });
  if (app.healthListener !== undefined && config.healthPort !== undefined) {
    try {
      const url = await app.healthListener.listen(config.healthPort, config.host);
      app.log.info({ health: url }, `health on ${url} (/healthz, /readyz)`);
    } catch (error) {
      say(`HEALTH_PORT: cannot listen on ${config.host}:${config.healthPort}: ${error instanceof Error ? error.message : String(error)}`);
      process.exit(1);
    }
  }
}

async function main(): Promise<void> {
  const config = await configure();
  if (config.workers > 1 && cluster.isPrimary) await runPrimary(config);
  else await runServer(config);
}

main().catch((error: unknown) => {
  say(`failed to start: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
