/**
 * The metrics server (docs/behaviour.md "Operations", "Configuration" `METRICS_PORT`): a server of its
 * own on its own port, never a route of the public app, and the cluster's aggregation: with `WORKERS`
 * > 1 each worker keeps its own registry and answers the primary's requests
 * ({@link answerClusterPrimary}); the primary serves the sum over the workers ({@link clusterMetricsSource}).
 *
 * @module
 */
import { createServer as createHttpServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AggregatorRegistry, type Registry } from 'prom-client';

/** The path the metrics server answers. */
export const METRICS_PATH = '/metrics';

/** Where the metrics server reads its text: one app's registry, or the cluster's aggregate. */
export interface MetricsSource {
  /** The exposition text (Prometheus 0.0.4). */
  metrics(): Promise<string>;
  readonly contentType: string;
}

/** A running metrics server. */
export interface MetricsServer {
  /** `http://host:port` (the port chosen by the system when 0 was asked). */
  readonly url: string;
  readonly server: Server;
  /** Stops listening and closes its connections. */
  close(): Promise<void>;
}

/**
 * Starts the metrics server (docs/behaviour.md "Operations", "Configuration" `METRICS_PORT`): a plain
 * node:http server answering `GET /metrics` (and `HEAD`) with the text of `source`; every other path
 * is 404, another method 405, and a failure to gather the metrics 500. It is a server of its own on
 * its own port, never a route of the public app.
 *
 * @param port - `METRICS_PORT` (0: any free port).
 * @param host - `HOST`, the public app's address.
 * @throws the listen error (`EADDRINUSE`…).
 */
export async function startMetricsServer(port: number, host: string, source: MetricsSource): Promise<MetricsServer> {
  const server = createHttpServer((req, res) => {
    const url = req.url ?? '';
    const query = url.indexOf('?');
    if ((query === -1 ? url : url.slice(0, query)) !== METRICS_PATH) {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('not found\n');
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8' }).end('method not allowed\n');
      return;
    }
    source.metrics().then(
      (text) => {
        res.writeHead(200, { 'content-type': source.contentType, 'cache-control': 'no-store' });
        res.end(req.method === 'HEAD' ? undefined : text);
      },
      () => {
        res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end('metrics unavailable\n');
      },
    );
  });
  server.requestTimeout = 30_000;
  server.headersTimeout = 10_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { address, port: bound } = server.address() as AddressInfo;
  const shown = address.includes(':') ? `[${address}]` : address;
  return {
    url: `http://${shown}:${bound}`,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * In a cluster worker: answers the primary's requests for metrics with `registries` (call it early
 * with none, so that a scrape during the start is not left waiting, then with the app's registry).
 */
export function answerClusterPrimary(registries: Registry[]): void {
  AggregatorRegistry.setRegistries(registries);
  // Constructing one installs the worker's listener (once per process).
  new AggregatorRegistry();
}

/**
 * In the cluster primary: the metrics of every worker, summed (gauges by their own rule: `redis_up`
 * the lowest, `build_info` the first, `circuit_state` the highest; `upstream_in_flight` is summed). A worker that does not answer within 5 s fails the scrape.
 */
export function clusterMetricsSource(): MetricsSource {
  const aggregator = new AggregatorRegistry();
  return { metrics: () => aggregator.clusterMetrics(), contentType: aggregator.contentType };
}
