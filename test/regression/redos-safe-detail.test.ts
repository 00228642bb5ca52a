// Regression: an upstream message that repeats a long path segment (the BFF's 404 for
// `GET /core-sportbook/<name>`) sent `safeDetail`'s source-path pattern into exponential backtracking —
// 20 letters took minutes — and one request without a session froze the proxy. Each input runs in a
// worker that is stopped after a generous limit, so a regression fails instead of hanging the suite.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Worker } from 'node:worker_threads';
import { startProxyProcess } from '../helpers/proxy-process.js';
import { type RecordingUpstream, startRecordingUpstream } from '../helpers/recording-upstream.js';

const LIMIT_MS = 5_000;
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
import(workerData.module).then(({ safeDetail }) => {
  for (const text of workerData.texts) safeDetail(text);
  parentPort.postMessage('done');
});
`;

/** Runs `safeDetail` over `texts` in a worker; resolves true when it finishes within {@link LIMIT_MS}. */
function finishesInTime(texts: string[]): Promise<boolean> {
  const module = new URL('../../dist/envelope.js', import.meta.url).href;
  const worker = new Worker(WORKER, { eval: true, workerData: { module, texts } });
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      void worker.terminate();
      resolve(false);
    }, LIMIT_MS);
    worker.once('message', () => {
      clearTimeout(timer);
      void worker.terminate();
      resolve(true);
    });
    worker.once('error', () => {
      clearTimeout(timer);
      resolve(false);
    });
  });
}

const ADVERSARIAL: Record<string, string[]> = {
  'a long word in a path': [
    `Route GET /core-sportbook/${'a'.repeat(40)} not found`,
    `Route GET /core-sportbook/${'zqxjQdXrPtsXFF'.repeat(200)}.html not found`,
  ],
  'many separators, no line number': ['/a'.repeat(2000), '\\a'.repeat(2000), 'a/b.c@d-e'.repeat(400)],
  'stack-like words': ['at '.repeat(1300), `at ${'x:1'.repeat(1300)}`, `at ${'a'.repeat(4000)}`],
  'address and token look-alikes': ['1.'.repeat(2000), `eyJ${'a.'.repeat(2000)}`, `http${':/'.repeat(2000)}`],
};

describe('safeDetail stays linear on adversarial upstream messages', () => {
  for (const [name, texts] of Object.entries(ADVERSARIAL)) {
    test(name, async () => {
      assert.ok(await finishesInTime(texts), `safeDetail did not finish within ${LIMIT_MS} ms`);
    });
  }
});

describe('GET /api/core-sportbook/<long name> whose upstream 404 repeats the path', () => {
  test('answers the 404 envelope in time, and the proxy keeps serving (the proxy runs as its own process)', async () => {
    const upstream: RecordingUpstream = await startRecordingUpstream();
    upstream.on('GET', /^\/core-sportbook\//, (req, res) => {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ message: `Route GET ${req.path} not found` }));
    });
    const proxy = startProxyProcess({ PORT: '0', NODE_ENV: 'test', BFF_BASE_URL: upstream.url });
    try {
      const base = await proxy.address;
      const name = 'zqxjQdXrPtsXFF'.repeat(3);
      const res = await fetch(`${base}/api/core-sportbook/${name}.html`, { signal: AbortSignal.timeout(LIMIT_MS) });
      assert.equal(res.status, 404);
      assert.equal(((await res.json()) as { error?: string }).error, 'not_found');
      assert.equal((await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(LIMIT_MS) })).status, 200);
    } finally {
      await proxy.kill();
      await upstream.close();
    }
  });
});
