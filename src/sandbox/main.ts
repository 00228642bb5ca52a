/**
 * `npm run sandbox`: the sandbox alone, for front-end work against a local BFF.
 *
 * Environment (all optional):
 * - `SANDBOX_PORT` base port, default 4000: BFF on it, sticker API on +1, external services on +2
 *   (`0` = any free ports).
 * - `SANDBOX_HOST` listen address, default `127.0.0.1`.
 * - `LOG_LEVEL` pino level, default `info`.
 *
 * The sandbox's log prints its banner (URLs and demo logins, once); this prints the configuration
 * variables to give the proxy, then serves until SIGINT or SIGTERM.
 *
 * @module
 */
import { pino } from 'pino';
import { startSandbox } from './index.js';

const LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

function fail(message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(1);
}

const portText = process.env.SANDBOX_PORT ?? '4000';
const port = Number(portText);
if (!/^\d+$/.test(portText) || port > 65_533) fail(`SANDBOX_PORT: expected an integer from 0 to 65533, got "${portText}"`);
const host = process.env.SANDBOX_HOST ?? '127.0.0.1';
const level = process.env.LOG_LEVEL ?? 'info';
if (!LEVELS.includes(level)) fail(`LOG_LEVEL: expected one of ${LEVELS.join(', ')}, got "${level}"`);

const sandbox = await startSandbox({ host, port, logger: pino({ name: 'sandbox', level }) }).catch((error: unknown) =>
  fail(`sandbox: cannot start: ${error instanceof Error ? error.message : String(error)}`),
);

const lines = [
  'Sandbox running. Point the proxy at it with:',
  ...Object.entries(sandbox.env).map(([name, value]) => `  ${name}=${value}`),
  '',
  `Admin API: ${sandbox.bffUrl}/__sandbox/requests, /__sandbox/fail-next, /__sandbox/reset … (see src/sandbox/README.md)`,
];
process.stdout.write(`${lines.join('\n')}\n`);

let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    sandbox.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
}
