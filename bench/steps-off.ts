/**
 * The proxy with pipeline steps left out, for the instruction bench's ledger (README "What each step
 * costs"): the one-process path of `dist/server.js` — the configuration read from the environment
 * (`loadConfig`), `createServer`, the metrics server on `METRICS_PORT` when the app has metrics, the
 * listener on `HOST`:`PORT`, the drain on SIGTERM or SIGINT — with `createServer`'s `omitSteps` set to
 * the steps named in `BENCH_STEPS_OFF` (comma-separated names of `PIPELINE_STEPS`,
 * `src/pipeline/steps.ts`). Measurement only: a proxy without a step is not a supported deployment,
 * and `dist/server.js` has no such switch.
 *
 * Run as `node <options> steps-off.mjs <checkout>` (compiled by `compile.ts`; the app is the
 * checkout's build, `<checkout>/dist`). An unknown step name, an invalid configuration or
 * `WORKERS` > 1 stops it at start with a line on standard error and exit status 1.
 *
 * @module
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

type AppModule = typeof import('../src/app.js');
type StepsModule = typeof import('../src/pipeline/steps.js');
type MetricsServerModule = typeof import('../src/pipeline/metrics-server.js');

/** Writes `line` to standard error and exits with status 1. */
function fail(line: string): never {
  process.stderr.write(`${line}\n`);
  process.exit(1);
}

async function main(): Promise<void> {
  const checkout = process.argv[2];
  if (checkout === undefined) fail('usage: steps-off.mjs <checkout>');
  const dist = (module: string) => pathToFileURL(join(checkout, 'dist', module)).href;
  const { createServer, loadConfig } = (await import(dist('app.js'))) as AppModule;
  const { pipelineSteps } = (await import(dist('pipeline/steps.js'))) as StepsModule;
  let omitSteps: ReturnType<StepsModule['pipelineSteps']>;
  try {
    omitSteps = pipelineSteps(process.env.BENCH_STEPS_OFF ?? '');
  } catch (error) {
    fail(`BENCH_STEPS_OFF: ${(error as Error).message}`);
  }
  let config: ReturnType<AppModule['loadConfig']>;
  try {
    config = loadConfig(process.env);
  } catch (error) {
    fail((error as { problems?: string[] }).problems?.join('\n') ?? String(error));
  }
  if (config.workers > 1) fail('WORKERS: the ledger runs one process');
  const app = await createServer(config, { omitSteps });
  if (app.metrics && config.metricsPort !== undefined) {
    const { startMetricsServer } = (await import(dist('pipeline/metrics-server.js'))) as MetricsServerModule;
    await startMetricsServer(config.metricsPort, config.host, app.metrics);
  }
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    app.drain().then(
      ({ cut }) => process.exit(cut > 0 ? 1 : 0),
      () => process.exit(1),
    );
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  await app.listen({ port: config.port, host: config.host });
}

main().catch((error: unknown) => fail(`failed to start: ${error instanceof Error ? error.message : String(error)}`));
