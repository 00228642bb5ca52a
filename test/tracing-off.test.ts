/**
 * docs/behaviour.md "Configuration", `OTEL_EXPORTER_OTLP_ENDPOINT`: unset, tracing costs nothing — the proxy
 * serves requests (to the upstream and back) without loading any OpenTelemetry module, and sends no
 * `traceparent` upstream. This file runs in its own process (node:test isolates files), so the module
 * cache holds only what this file and the proxy loaded.
 */
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { test } from 'node:test';
import { loadConfig } from '../src/config.js';
import { createTracing } from '../src/pipeline/tracing.js';
import { fakeJwt, send, useProxyWithRecorder } from './helpers/recording-upstream.js';

const { upstream, proxy } = useProxyWithRecorder();

/** The OpenTelemetry modules in the module cache (every package of the project is CommonJS). */
function loadedOpenTelemetry(): string[] {
  const cache = createRequire(import.meta.url).cache;
  return Object.keys(cache).filter((file) => /[\\/]node_modules[\\/](@opentelemetry|@fastify[\\/]otel)[\\/]/.test(file));
}

test('tracing off: requests are served and no OpenTelemetry module is loaded', async () => {
  assert.equal(await createTracing(loadConfig({ BFF_BASE_URL: upstream.url })), undefined);
  upstream.on('GET', '/auth/user-profile', { status: 200, json: { user: { id: 1 } } });
  const ok = await send(proxy.url, 'GET', '/api/auth/profile', { token: fakeJwt() });
  assert.equal(ok.status, 200);
  const failed = await send(proxy.url, 'GET', '/api/auth/profile');
  assert.equal(failed.status, 401);
  assert.equal(upstream.requests.length, 1);
  assert.equal(upstream.requests[0]?.headers.traceparent, undefined, 'no traceparent upstream');
  assert.deepEqual(loadedOpenTelemetry(), []);
});

test('the check sees an OpenTelemetry module once one is loaded', async () => {
  await import('@opentelemetry/api');
  assert.ok(
    loadedOpenTelemetry().some((file) => file.includes('@opentelemetry')),
    'the module cache shows it',
  );
});

test('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: an http(s) URL kept for the exporter; anything else stops the start', () => {
  assert.equal(loadConfig({}).otlpTracesEndpoint, undefined);
  assert.equal(
    loadConfig({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://otel.example.com/custom/traces' }).otlpTracesEndpoint,
    'https://otel.example.com/custom/traces',
  );
  assert.throws(() => loadConfig({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'collector:4318' }), /OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: expected/);
});

test('OTEL_EXPORTER_OTLP_ENDPOINT: an http(s) URL, trailing slashes dropped; anything else stops the start', () => {
  assert.equal(loadConfig({}).otlpEndpoint, undefined);
  assert.equal(
    loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector.internal:4318/' }).otlpEndpoint,
    'http://collector.internal:4318',
  );
  assert.equal(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://otel.example.com/base' }).otlpEndpoint, 'https://otel.example.com/base');
  for (const bad of ['collector:4318', 'grpc://collector:4317', 'http://collector:4318/?x=1']) {
    assert.throws(
      () => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: bad }),
      /^ConfigError: invalid configuration: OTEL_EXPORTER_OTLP_ENDPOINT: expected/,
    );
  }
});
