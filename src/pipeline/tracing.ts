/**
 * Pipeline step **tracing** (docs/behaviour.md "Operations", tracing; "Configuration",
 * `OTEL_EXPORTER_OTLP_ENDPOINT`). Off unless the variable is set; then OpenTelemetry is set up and this
 * step, registered right after the logging, makes a server span for every request (`http.route`: the
 * route pattern) and the upstream client a client span for every upstream call (`front_proxy.endpoint`:
 * its EP code, spec 7.2), with the configured propagators' headers (`OTEL_PROPAGATORS`; W3C
 * `traceparent` and `baggage` by default) sent upstream. The spans are the proxy's own, made through
 * the OpenTelemetry API and SDK (`tracing-sdk.ts`). Spans go to `<endpoint>/v1/traces` over OTLP/HTTP
 * (JSON, or protobuf with `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=http/protobuf`); the standard `OTEL_*`
 * variables of the process apply (service name, batch delay and queue bounds, sampler:
 * `OTEL_TRACES_SAMPLER=parentbased_traceidratio` with `OTEL_TRACES_SAMPLER_ARG=0.1` traces one request
 * in ten; the others cost one sampling decision and their propagation headers, which still go
 * upstream, marked not sampled).
 *
 * Nothing of OpenTelemetry is loaded when tracing is off: this module imports none of it, and the
 * setup (`tracing-sdk.ts`) is loaded with a dynamic `import()` only when the variable is set.
 *
 * No span attribute holds a credential: no request or response header is recorded but `User-Agent`, query strings keep
 * their names with every value replaced by `REDACTED`, and exceptions are not recorded.
 *
 * @module
 */
import type { FastifyPluginAsync } from 'fastify';
import type { Config } from '../config.js';
import type { UpstreamTracer } from '../upstream/client.js';

/** The tracing step of one app. */
export interface Tracing {
  /** Registers the server spans and flushes the spans at close; register it first after the logging. */
  readonly plugin: FastifyPluginAsync;
  /** The client spans and propagation headers of the upstream calls (the upstream pools' `tracer`). */
  readonly upstream: UpstreamTracer;
}

/**
 * The tracing step of an app, or `undefined` when neither `OTEL_EXPORTER_OTLP_ENDPOINT` nor
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is set (then nothing of OpenTelemetry is loaded). Spans go to
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` as given, else to `<OTEL_EXPORTER_OTLP_ENDPOINT>/v1/traces`. When it is set, loads and starts the OpenTelemetry SDK: a tracer provider
 * exporting over OTLP/HTTP with the environment's sampler, and the propagators of `OTEL_PROPAGATORS`. The process-wide OpenTelemetry registration belongs to one app at a time: the app
 * removes it when it closes.
 *
 * @param config - the endpoints (`otlpEndpoint`, `otlpTracesEndpoint`), the upstream base URLs (to find an upstream call's EP
 *   code below a BFF path prefix) and the build id (`service.version`).
 * @returns the step to register, or `undefined` (tracing off).
 * @throws whatever loading the OpenTelemetry packages throws (a broken install), only when tracing is on.
 */
export async function createTracing(
  config: Pick<Config, 'otlpEndpoint' | 'otlpTracesEndpoint' | 'upstreams' | 'buildId'> & Partial<Pick<Config, 'otlpSettings'>>,
): Promise<Tracing | undefined> {
  const tracesUrl = config.otlpTracesEndpoint ?? (config.otlpEndpoint === undefined ? undefined : `${config.otlpEndpoint}/v1/traces`);
  if (tracesUrl === undefined) return undefined;
  const { startTracing } = await import('./tracing-sdk.js');
  return startTracing({ tracesUrl, upstreams: config.upstreams, buildId: config.buildId, settings: config.otlpSettings ?? {} });
}
