/**
 * The OpenTelemetry setup of the tracing step (`tracing.ts`), loaded with a dynamic `import()` only when
 * `OTEL_EXPORTER_OTLP_ENDPOINT` is set: nothing else in the proxy imports this module or any
 * OpenTelemetry package.
 *
 * - Server spans: `@fastify/otel` as a plugin of the app (no module patching), one `SERVER` span per
 *   request named `<method> <route pattern>` with `http.route`, `http.request.method`, `url.path`
 *   (without the query) and `http.response.status_code`; the upstream calls are its children. Neither
 *   the handler nor the hooks get a span of their own.
 * - Client spans: `@opentelemetry/instrumentation-undici` (diagnostics channels, no patching), one
 *   `CLIENT` span per upstream call with `front_proxy.endpoint` (its EP code, spec 7.2) and the
 *   `traceparent` header added to the call.
 * - No header is recorded on any span; `url.full` and `url.query` keep the query's names with every value
 *   replaced by `REDACTED`; exceptions are not recorded (their messages could quote an upstream).
 * - Sampling is the SDK's, from the environment (`OTEL_TRACES_SAMPLER`, `OTEL_TRACES_SAMPLER_ARG`, e.g.
 *   `parentbased_traceidratio` and `0.1`; default `parentbased_always_on`), read by the tracer provider.
 *   A request the sampler leaves out gets non-recording spans: nothing reaches the span processor or the
 *   exporter, and the proxy's hooks add no attribute and build no redacted URL for it; the W3C
 *   `traceparent` still goes upstream, with the sampled flag off. With a parent-based sampler (the
 *   default, and every `parentbased_*`) an upstream call under such a request is not instrumented at all:
 *   its span could only be left out too, so the trace context headers are added to the call directly
 *   ({@link propagateUnsampled}) instead of the instrumentation's URL parsing, attributes and
 *   non-recording span.
 * - Export: one batch span processor (its queue bounded: `OTEL_BSP_MAX_QUEUE_SIZE`, default 2,048 spans,
 *   spans past it dropped; `OTEL_BSP_MAX_EXPORT_BATCH_SIZE`, default 512, one export in flight at a
 *   time) and OTLP/HTTP in the encoding `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL` (or
 *   `OTEL_EXPORTER_OTLP_PROTOCOL`) gives: `http/json` (the default) or `http/protobuf`.
 *
 * @module
 */
import { FastifyOtelInstrumentation } from '@fastify/otel';
import { context, type DiagLogger, diag, DiagLogLevel, isSpanContextValid, propagation, type Span, trace, TraceFlags } from '@opentelemetry/api';
import { OTLPTraceExporter as OTLPJsonTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as OTLPProtobufTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { UndiciInstrumentation, type UndiciRequest } from '@opentelemetry/instrumentation-undici';
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import type { FastifyInstance, FastifyPluginAsync, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { type EndpointCode, endpointCodeFor, UNKNOWN_ENDPOINT_CODE } from '../errors/index.js';

/** The span attribute that names an upstream call's EP code (spec 7.2). */
export const ENDPOINT_ATTRIBUTE = 'front_proxy.endpoint';

/** Longest time the spans still buffered get to be exported when the app closes, in milliseconds. */
const FLUSH_AT_CLOSE_MS = 1_000;

/** What the tracing needs from the configuration. */
export interface TracingSetup {
  /**
   * The URL spans are sent to: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` as given, else
   * `<OTEL_EXPORTER_OTLP_ENDPOINT>/v1/traces` (read by `loadConfig`, never from `process.env` here).
   */
  readonly tracesUrl: string;
  /** The upstream base URLs (`Config.upstreams`), for the EP code of a call below a BFF path prefix. */
  readonly upstreams: Readonly<Record<string, string | undefined>>;
  /** `service.version` of the spans. */
  readonly buildId: string;
  /** The exporter's encoding and the sampler's name, as configured (`Config.otlpSettings`). */
  readonly settings: Readonly<Record<string, string | undefined>>;
}

/** The OTLP/HTTP encodings the exporter speaks (`OTEL_EXPORTER_OTLP_TRACES_PROTOCOL` values). */
export type OtlpProtocol = 'http/json' | 'http/protobuf';

/**
 * The exporter's encoding from the environment: `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL`, else
 * `OTEL_EXPORTER_OTLP_PROTOCOL`; `http/json` when neither is set. `grpc` (not served: the proxy
 * exports over HTTP only) and any other value are `http/json` too, with `unsupported` set so the caller
 * can say so in a warning line.
 */
export function otlpProtocol(env: Readonly<Record<string, string | undefined>>): { protocol: OtlpProtocol; unsupported?: string } {
  const raw = (env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL || env.OTEL_EXPORTER_OTLP_PROTOCOL || '').trim();
  if (raw === '' || raw === 'http/json') return { protocol: 'http/json' };
  if (raw === 'http/protobuf') return { protocol: 'http/protobuf' };
  return { protocol: 'http/json', unsupported: raw };
}

/**
 * Whether the sampler `OTEL_TRACES_SAMPLER` names (as the SDK reads it; unset or empty:
 * `parentbased_always_on`) follows a local parent's decision, so that a span under an unsampled span is
 * never sampled.
 */
export function isParentBasedSampler(name: string | undefined): boolean {
  const value = (name ?? '').trim();
  return value === '' || value.startsWith('parentbased_');
}

/**
 * For an upstream call made under a span the sampler left out (with a parent-based sampler, the call's
 * span would be left out too): adds the trace context headers of the active context to the call, as
 * the instrumentation would (W3C `traceparent` with the sampled flag off, and `tracestate`/`baggage`
 * when present), and answers `true` so that the instrumentation skips it. Any other call (no active
 * span, or a sampled one): `false`, the instrumentation handles it.
 */
export function propagateUnsampled(request: Pick<UndiciRequest, 'addHeader'>): boolean {
  const active = trace.getActiveSpan()?.spanContext();
  if (active === undefined || !isSpanContextValid(active) || (active.traceFlags & TraceFlags.SAMPLED) !== 0) return false;
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  for (const [name, value] of Object.entries(carrier)) request.addHeader(name, value);
  return true;
}

/** A query parameter name short and plain enough to be no credential; any other name is redacted too. */
const PLAIN_NAME = /^[A-Za-z0-9_.[\]-]{1,64}$/;

/**
 * A query string with every value replaced by `REDACTED` (and a name that could be a value itself too):
 * `?a=1&b` → `?a=REDACTED&b`.
 */
export function redactQuery(search: string): string {
  if (search === '' || search === '?') return search;
  const parts = search.slice(1).split('&').map((part) => {
    const eq = part.indexOf('=');
    const name = eq === -1 ? part : part.slice(0, eq);
    const safeName = PLAIN_NAME.test(name) ? name : 'REDACTED';
    return eq === -1 ? safeName : `${safeName}=REDACTED`;
  });
  return `?${parts.join('&')}`;
}

/** A path without its query string. */
function withoutQuery(url: string): string {
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}

/**
 * The EP code of an upstream call: its path below a configured upstream's base path when one matches
 * (a BFF mounted under a prefix), else its whole URL, as the classifier matches it (spec 7.2).
 */
function endpointFinder(upstreams: TracingSetup['upstreams']): (method: string, origin: string, path: string) => EndpointCode {
  const bases: { origin: string; prefix: string }[] = [];
  for (const value of Object.values(upstreams)) {
    if (value === undefined) continue;
    const url = new URL(value);
    const prefix = url.pathname.replace(/\/+$/, '');
    if (prefix !== '' && !bases.some((b) => b.origin === url.origin && b.prefix === prefix)) bases.push({ origin: url.origin, prefix });
  }
  bases.sort((a, b) => b.prefix.length - a.prefix.length);
  return (method, origin, path) => {
    for (const base of bases) {
      if (base.origin !== origin || !path.startsWith(base.prefix)) continue;
      const rest = path.slice(base.prefix.length);
      if (rest !== '' && rest[0] !== '/' && rest[0] !== '?') continue;
      const code = endpointCodeFor(method, rest);
      if (code !== UNKNOWN_ENDPOINT_CODE) return code;
    }
    return endpointCodeFor(method, `${origin}${path}`);
  };
}

/** OpenTelemetry's own warnings and errors (a collector that cannot be reached) as log lines of the app. */
function diagnostics(app: FastifyInstance): DiagLogger {
  const describe = (args: unknown[]) => args.map((a) => (a instanceof Error ? a.message : typeof a === 'string' ? a : typeof a));
  const line = (message: string, args: unknown[]) => {
    // The SDK's error handler passes an error as its JSON text, stack included: keep its message only.
    let text = message;
    try {
      const parsed = JSON.parse(message) as { message?: unknown };
      if (typeof parsed.message === 'string') text = parsed.message;
    } catch {
      // a plain message
    }
    app.log.warn({ detail: describe(args) }, `opentelemetry: ${text.slice(0, 500)}`);
  };
  const ignore = () => {};
  return {
    error: (message, ...args) => line(message, args),
    warn: (message, ...args) => line(message, args),
    info: ignore,
    debug: ignore,
    verbose: ignore,
  };
}

/**
 * Starts the OpenTelemetry SDK for one app (see the module documentation) and gives its tracing step.
 * Registers the tracer provider, the W3C trace-context propagator and the async-hooks context manager
 * process-wide; the step's close hook flushes the spans, stops the instrumentations and removes that
 * registration.
 *
 * @param setup - the endpoint, the upstream base URLs and the build id.
 * @returns the tracing step, whose plugin must be registered before any route.
 */
export function startTracing(setup: TracingSetup): { readonly plugin: FastifyPluginAsync } {
  const resource = resourceFromAttributes({ 'service.name': 'front-proxy', 'service.version': setup.buildId }).merge(
    detectResources({ detectors: [envDetector] }),
  );
  const { protocol, unsupported } = otlpProtocol(setup.settings);
  const exporterConfig = { url: setup.tracesUrl };
  const exporter = protocol === 'http/protobuf' ? new OTLPProtobufTraceExporter(exporterConfig) : new OTLPJsonTraceExporter(exporterConfig);
  // The sampler is the provider's default: read from OTEL_TRACES_SAMPLER / OTEL_TRACES_SAMPLER_ARG. The
  // batch processor's bounds come from OTEL_BSP_* (defaults: 2,048 spans queued, 512 per export).
  const provider = new NodeTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(exporter)] });
  provider.register();

  const endpointOf = endpointFinder(setup.upstreams);
  // Instrumentations start enabled on construction (the undici one reads `enabled` per call), after the
  // provider is registered; each is also given the provider directly.
  // The attributes are set once the span exists, and only on a span the sampler kept: an unsampled call
  // builds no URL and no attribute of ours. They replace the instrumentation's own `url.full` and
  // `url.query` (which hold the raw query) before the span can end.
  const undici = new UndiciInstrumentation({
    ...(isParentBasedSampler(setup.settings.OTEL_TRACES_SAMPLER) ? { ignoreRequestHook: propagateUnsampled } : {}),
    requestHook: (span: Span, request: UndiciRequest) => {
      if (!span.isRecording()) return;
      const origin = new URL(String(request.origin)).origin;
      const target = new URL(request.path, origin);
      const query = redactQuery(target.search);
      span.setAttributes({
        [ENDPOINT_ATTRIBUTE]: endpointOf(request.method, origin, request.path),
        'url.full': `${origin}${target.pathname}${query}`,
        'url.query': query,
      });
    },
  });
  undici.setTracerProvider(provider);

  const server = new FastifyOtelInstrumentation({
    registerOnInitialization: false,
    instrumentHooks: false,
    // No span of its own around the handler: the upstream calls are children of the server span, and a
    // request pays for one span (and one context switch) instead of two, sampled or not.
    instrumentHandler: false,
    recordExceptions: false,
    requestHook: (span: Span, request: FastifyRequest) => {
      if (!span.isRecording()) return;
      const route = request.routeOptions.url;
      span.updateName(route === undefined ? request.method : `${request.method} ${route}`);
      span.setAttribute('url.path', withoutQuery(request.url));
    },
  });
  server.setTracerProvider(provider);

  const plugin = fp(
    async (app: FastifyInstance) => {
      diag.setLogger(diagnostics(app), DiagLogLevel.WARN);
      if (unsupported !== undefined) {
        app.log.warn({ protocol: unsupported }, 'opentelemetry: unsupported OTLP protocol, exporting over OTLP/HTTP JSON');
      }
      await app.register(server.plugin());
      app.addHook('onClose', async () => {
        undici.disable();
        server.disable();
        // The last spans get a short while to leave: a collector that cannot be reached never holds up
        // the shutdown (the exporter would retry for its whole time limit).
        let timer: NodeJS.Timeout | undefined;
        const giveUp = new Promise<void>((resolve) => {
          timer = setTimeout(resolve, FLUSH_AT_CLOSE_MS).unref();
        });
        try {
          await Promise.race([provider.shutdown().catch(() => undefined), giveUp]);
        } finally {
          clearTimeout(timer);
          trace.disable();
          context.disable();
          propagation.disable();
          diag.disable();
        }
      });
    },
    { name: 'tracing' },
  );
  return { plugin };
}
