/**
 * A fake OTLP/HTTP collector on 127.0.0.1 for the tracing tests: keeps every export posted to
 * `/v1/traces` (or `/otlp/traces`, a traces endpoint given as a whole URL), gunzipped, with its path and
 * content type, and answers 200.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';

/** One export as the collector received it. */
export interface OtlpExportReceived {
  path: string;
  contentType: string;
  body: Buffer;
}

export interface OtlpCollector {
  url: string;
  /** Every export received, in order. */
  readonly exports: OtlpExportReceived[];
  close(): Promise<void>;
}

/** The paths an export may be posted to. */
const TRACES_PATHS = new Set(['/v1/traces', '/otlp/traces']);

/** Starts the collector on a free loopback port. */
export async function startOtlpCollector(): Promise<OtlpCollector> {
  const exports: OtlpExportReceived[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let body = Buffer.concat(chunks);
      if (req.headers['content-encoding'] === 'gzip') body = gunzipSync(body);
      const path = req.url ?? '';
      if (req.method === 'POST' && TRACES_PATHS.has(path)) {
        const contentType = String(req.headers['content-type']);
        exports.push({ path, contentType, body });
        res.writeHead(200, { 'content-type': contentType }).end(contentType.includes('json') ? '{}' : undefined);
      } else {
        res.writeHead(404).end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    exports,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
