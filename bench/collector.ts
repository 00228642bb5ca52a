/**
 * The trace collector of the benchmark's `tracing` scenario: a plain `node:http` server standing for
 * an OpenTelemetry collector's OTLP/HTTP receiver. It answers `POST /v1/traces` (and `POST <prefix>/v1/traces`,
 * counted apart by prefix: one per exporting proxy) with 200 and an empty
 * body (a valid OTLP answer in JSON as in protobuf: an export with nothing rejected) once it has read
 * the request, and counts the exports and their bytes. It decodes nothing: the cost measured is the
 * proxy's, not a collector's.
 *
 * Control endpoint, never an OTLP path: `GET /__bench/exports` answers the counts since start
 * (`{ exports, bytes }`, see {@link CollectorCounts}).
 *
 * Run as a child process, compiled to JavaScript by `compile.ts`: `node collector.mjs [port]`;
 * the first line on standard output is `{"port":N}`.
 *
 * @module
 */
import { createServer } from 'node:http';
import { type Listening, listenOnLoopback, runAsScript } from './serve.js';

/** The OTLP/HTTP path of trace exports. */
export const TRACES_PATH = '/v1/traces';

/** Exports received and their bytes. */
export interface ExportCounts {
  /** `POST …/v1/traces` requests answered. */
  exports: number;
  /** Bytes of their bodies (as sent: JSON or protobuf, compressed or not). */
  bytes: number;
}

/** What the collector received since it started: in all, and by the path before `/v1/traces` (one per exporting proxy). */
export interface CollectorCounts extends ExportCounts {
  byPrefix: Record<string, ExportCounts>;
}

/**
 * Starts the collector on loopback.
 * @param port - listen port; `0` (default) picks a free one.
 * @returns the chosen port and a `close()`.
 */
export async function startCollector(port = 0): Promise<Listening> {
  const counts: CollectorCounts = { exports: 0, bytes: 0, byPrefix: {} };
  const server = createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    if (req.method === 'GET' && path === '/__bench/exports') {
      const body = JSON.stringify(counts);
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
      return;
    }
    let bytes = 0;
    req.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
    });
    req.on('end', () => {
      if (req.method !== 'POST' || !path.endsWith(TRACES_PATH)) {
        res.writeHead(404, { 'content-length': 0 });
        res.end();
        return;
      }
      counts.exports++;
      counts.bytes += bytes;
      const prefix = path.slice(0, -TRACES_PATH.length);
      const own = (counts.byPrefix[prefix] ??= { exports: 0, bytes: 0 });
      own.exports++;
      own.bytes += bytes;
      // An empty ExportTraceServiceResponse, in the request's own encoding.
      const type = req.headers['content-type']?.includes('protobuf') ? 'application/x-protobuf' : 'application/json';
      res.writeHead(200, { 'content-type': type, 'content-length': 0 });
      res.end();
    });
  });
  return listenOnLoopback(server, port);
}

await runAsScript(import.meta.url, startCollector);
