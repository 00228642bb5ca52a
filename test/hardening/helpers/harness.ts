/**
 * The common set-up of the hardening rows: the proxy (in this process, so that prototype pollution
 * and crashes are visible) in front of the fault upstream, with every upstream service under its
 * prefix (`startProxy`), the route cases of the active tables, and a watch on uncaught errors.
 */
import type { ServerOptions } from '../../../src/app.js';
import { fakeJwt, startProxy, type TestProxy } from '../../helpers/recording-upstream.js';
import { type RouteCase, routeCases } from './routes.js';
import { type FaultUpstream, startFaultUpstream } from './upstream.js';

export interface Harness {
  upstream: FaultUpstream;
  proxy: TestProxy;
  /** `http://127.0.0.1:<port>` of the proxy. */
  base: string;
  port: number;
  cases: RouteCase[];
  /** `Cookie` header value carrying `token` as the session. */
  cookie(token: string): string;
  /** Uncaught exceptions and unhandled rejections seen since the start. */
  readonly crashes: string[];
  close(): Promise<void>;
}

/** A JWT that is easy to find anywhere: every row's canary is one of these. */
export function canaryJwt(label: string): string {
  return fakeJwt({ sub: '7', canary: `${label}-${Math.random().toString(36).slice(2, 10)}` });
}

export async function startHarness(
  env: Record<string, string> = {},
  upstreamOptions: Parameters<typeof startFaultUpstream>[0] = {},
  serverOptions: ServerOptions = {},
): Promise<Harness> {
  const crashes: string[] = [];
  const onError = (error: unknown) => {
    crashes.push(
      error instanceof Error ? (error.stack ?? `${error.name}: ${error.message}`).split('\n').slice(0, 8).join(' | ') : String(error),
    );
  };
  process.on('uncaughtException', onError);
  process.on('unhandledRejection', onError);
  const upstream = await startFaultUpstream(upstreamOptions);
  // The rows inject the same fault again and again on one endpoint and check each answer: the
  // circuit breakers, which would answer them 503 `upstream_circuit_open` after a few, are row 16's.
  const proxy = await startProxy(upstream.url, { UPSTREAM_TIMEOUT_MS: '2000', UPSTREAM_CIRCUIT_FAILURES: '0', ...env }, serverOptions);
  const base = proxy.url;
  const name = proxy.app.deps.config.sessionCookieName;
  return {
    upstream,
    proxy,
    base,
    port: Number(new URL(base).port),
    cases: routeCases(proxy.app.deps.config),
    cookie: (token) => `${name}=${token}`,
    crashes,
    async close() {
      await proxy.close();
      await upstream.close();
      process.off('uncaughtException', onError);
      process.off('unhandledRejection', onError);
    },
  };
}
