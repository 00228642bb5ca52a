/**
 * The OpenTelemetry setup of the tracing step (`tracing.ts`), loaded with a dynamic `import()` only when
 * `OTEL_EXPORTER_OTLP_ENDPOINT` is set: nothing else in the proxy imports this module or any
 * OpenTelemetry package.
 *
 * The spans are made here, through the OpenTelemetry API and SDK, from the step's own hook and from the
 * upstream client (docs/behaviour.md "Operations"; docs/architecture.md "Habits": cheap when off, cheap
 * when sampled out). No instrumentation package, no module patching, no diagnostics-channel subscriber,
 * no async context manager: a request's trace context travels on the request itself and is handed to
 * the upstream client with each call.
 *
 * - Server spans: one `SERVER` span per request, named `<method> <route pattern>` (the method alone
 *   without a route: a 404), with `http.request.method`, `url.path`, `url.query` (values redacted),
 *   `url.scheme`, `server.address`, `server.port`, `client.address`, `network.protocol.version`,
 *   `user_agent.original`, `http.route`, `http.response.status_code` and the request id
 *   (`front_proxy.request_id`); status `ERROR` and `error.type` (the status code) for a 5xx answer. It
 *   starts at the request's first hook after the logging and ends when the answer is written (or the
 *   connection closes). Health probes (`/healthz`, `/readyz`, either port) get no span, and the
 *   readiness probe's BFF call none either.
 * - Logs: every line a request logs carries `trace_id` and `span_id` (its server span's), or `trace_id`
 *   alone when the sampler left the request out (`bindTraceFields`, `logging.ts`).
 * - Client spans: one `CLIENT` span per upstream call, a child of the request's server span, named
 *   after the method, with `http.request.method`, `url.full`, `url.path`, `url.query`, `url.scheme`,
 *   `server.address`, `server.port`, `front_proxy.endpoint` (its EP code, spec 7.2) and
 *   `http.response.status_code`; status `ERROR` for a status ≥ 400 (`error.type`: the status code) or a
 *   failure without an answer (`error.type`: the proxy's error code). Calls the proxy makes on its own behalf (a catalogue fill
 *   shared by many requests, the readiness probe) are root spans, linked to the request that caused
 *   them when that request is sampled.
 * - No header is recorded on any span but the user agent; `url.full` and `url.query` keep the query's
 *   names with every value replaced by `REDACTED`; exceptions are not recorded (their messages could quote an upstream).
 * - Propagation: the globally registered propagator, from `OTEL_PROPAGATORS` (`tracecontext`,
 *   `baggage`, `b3`, `b3multi`, `none`; default `tracecontext,baggage`): it reads the incoming request's
 *   headers and writes the upstream call's.
 * - Sampling: the SDK's sampler from the environment (`OTEL_TRACES_SAMPLER`, `OTEL_TRACES_SAMPLER_ARG`,
 *   e.g. `parentbased_traceidratio` and `0.1`; default `parentbased_always_on`), asked once per request.
 *   A request it leaves out costs that decision (and the trace id it needs) and, on each upstream call,
 *   the propagation headers (`traceparent` with the sampled flag off, the caller's trace id kept):
 *   no span object, no context object, no attribute. With every sampler the SDK reads from the
 *   environment, an upstream call under a request left out would be left out too (parent-based: the
 *   parent decides; ratio: the same trace id; always on/off), so it gets no span either.
 * - Export: one batch span processor (its queue bounded: `OTEL_BSP_MAX_QUEUE_SIZE`, default 2,048 spans,
 *   spans past it dropped; `OTEL_BSP_MAX_EXPORT_BATCH_SIZE`, default 512, one export in flight at a
 *   time) and OTLP/HTTP in the encoding `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL` (or
 *   `OTEL_EXPORTER_OTLP_PROTOCOL`) gives: `http/json` (the default) or `http/protobuf`.
 *
 * @module
 */
import {
  type Attributes,
  type Context,
  createContextKey,
  type DiagLogger,
  diag,
  DiagLogLevel,
  isSpanContextValid,
  type Link,
  propagation,
  ROOT_CONTEXT,
  type Span,
  type SpanContext,
  SpanKind,
  SpanStatusCode,
  type TextMapPropagator,
  trace,
  TraceFlags,
  type Tracer,
} from '@opentelemetry/api';
import { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter as OTLPJsonTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as OTLPProtobufTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { B3InjectEncoding, B3Propagator } from '@opentelemetry/propagator-b3';
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  type IdGenerator,
  RandomIdGenerator,
  type Sampler,
  SamplingDecision,
  type SamplingResult,
} from '@opentelemetry/sdk-trace-base';
// The SDK's own reading of OTEL_TRACES_SAMPLER / OTEL_TRACES_SAMPLER_ARG (what its tracer provider
// does by default), not part of the package's index.
import { buildSamplerFromEnv } from '@opentelemetry/sdk-trace-base/build/src/config.js';
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { type EndpointCode, endpointCodeFor, UNKNOWN_ENDPOINT_CODE } from '../errors/index.js';
import { clientAddress } from '../session/client.js';
import type { UpstreamSpan, UpstreamTracer } from '../upstream/client.js';
import type { UpstreamError } from '../upstream/errors.js';
import { bindTraceFields } from './logging.js';
import { routeConfigOf, targetPath } from './request-context.js';

/** The span attribute that names an upstream call's EP code (spec 7.2). */
export const ENDPOINT_ATTRIBUTE = 'front_proxy.endpoint';

/** Longest time the spans still buffered get to be exported when the app closes, in milliseconds. */
const FLUSH_AT_CLOSE_MS = 1_000;

/** The instrumentation scope of every span the proxy makes. */
const SCOPE = 'front-proxy';

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
  /** The exporter's encoding and the propagators, as configured (`Config.otlpSettings`). */
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

/** The `OTEL_PROPAGATORS` names the proxy knows. */
export type PropagatorName = 'tracecontext' | 'baggage' | 'b3' | 'b3multi';

const KNOWN_PROPAGATORS: ReadonlySet<string> = new Set<PropagatorName>(['tracecontext', 'baggage', 'b3', 'b3multi']);

/**
 * The propagators `OTEL_PROPAGATORS` names (a comma-separated list, as the OpenTelemetry environment
 * specification reads it): unset or empty, `tracecontext,baggage`; `none`, no propagator at all. Each
 * name once, in the list's order; a name the proxy does not know (`jaeger`, `xray`, `ottrace`…) is left
 * out and given in `unsupported`, so the caller can say so in a warning line.
 */
export function propagatorNames(value: string | undefined): { names: PropagatorName[]; unsupported: string[] } {
  const listed = (value ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  if (listed.length === 0) return { names: ['tracecontext', 'baggage'], unsupported: [] };
  const names: PropagatorName[] = [];
  const unsupported: string[] = [];
  for (const name of listed) {
    if (name === 'none') continue;
    if (!KNOWN_PROPAGATORS.has(name)) unsupported.push(name);
    else if (!names.includes(name as PropagatorName)) names.push(name as PropagatorName);
  }
  return { names, unsupported };
}

/** The propagator of one `OTEL_PROPAGATORS` name. */
function propagatorOf(name: PropagatorName): TextMapPropagator {
  switch (name) {
    case 'tracecontext':
      return new W3CTraceContextPropagator();
    case 'baggage':
      return new W3CBaggagePropagator();
    case 'b3':
      return new B3Propagator({ injectEncoding: B3InjectEncoding.SINGLE_HEADER });
    case 'b3multi':
      return new B3Propagator({ injectEncoding: B3InjectEncoding.MULTI_HEADER });
  }
}

/**
 * A query parameter name short and plain enough to be no credential (letters, digits and the URL's
 * unreserved and percent-encoding characters, at most 64): any other name is redacted too.
 */
const PLAIN_NAME = /^[A-Za-z0-9_.~%[\]-]{1,64}$/;

/**
 * A query string with every value replaced by `REDACTED` (and a name that could be a value itself too):
 * `?a=1&b` → `?a=REDACTED&b`.
 */
export function redactQuery(search: string): string {
  if (search === '' || search === '?') return search;
  const parts = search
    .slice(1)
    .split('&')
    .map((part) => {
      const eq = part.indexOf('=');
      const name = eq === -1 ? part : part.slice(0, eq);
      const safeName = PLAIN_NAME.test(name) ? name : 'REDACTED';
      return eq === -1 ? safeName : `${safeName}=REDACTED`;
    });
  return `?${parts.join('&')}`;
}

/** The attribute that carries the request id (`X-Request-Id`), which the request's log lines carry as `reqId`. */
export const REQUEST_ID_ATTRIBUTE = 'front_proxy.request_id';

/**
 * The attributes a server span starts with (the HTTP semantic conventions' required and recommended
 * server attributes): `http.request.method`, `url.path` and `url.query` (values redacted),
 * `url.scheme`, `server.address` and `server.port` (from the `Host` the client sent), `client.address`
 * (the client address, `TRUSTED_PROXIES` applied), `network.protocol.version`, `user_agent.original`,
 * `http.route`, and the request id.
 */
function serverAttributes(request: FastifyRequest, route: string | undefined): Attributes {
  const target = targetPath(request.url);
  const q = target.indexOf('?');
  const attributes: Attributes = {
    'http.request.method': request.method,
    'url.path': q === -1 ? target : target.slice(0, q),
    'url.scheme': request.protocol,
    'client.address': clientAddress(request),
    'network.protocol.version': request.raw.httpVersion,
    [REQUEST_ID_ATTRIBUTE]: request.id,
  };
  if (q !== -1) attributes['url.query'] = redactQuery(target.slice(q));
  if (request.hostname) attributes['server.address'] = request.hostname;
  if (request.port !== null) attributes['server.port'] = request.port;
  const agent = request.headers['user-agent'];
  if (agent) attributes['user_agent.original'] = agent.slice(0, 512);
  if (route !== undefined) attributes['http.route'] = route;
  return attributes;
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
 * The tracer provider's sampler and id generator: the environment's sampler, except for the next span
 * when the tracing step has already asked it for that span (a request's server span), in which case
 * its answer and the trace id it was given are handed over, so that the sampler is asked once per
 * request and the span gets the trace id the decision was made on. The hand-over is synchronous
 * (set just before `startSpan`, cleared just after).
 */
class SamplerHandoff implements Sampler, IdGenerator {
  readonly #sampler: Sampler;
  readonly #ids = new RandomIdGenerator();
  #decision: SamplingResult | undefined;
  #traceId: string | undefined;
  constructor(sampler: Sampler) {
    this.#sampler = sampler;
  }
  /** The environment's sampler, asked directly (once per request). */
  get sampler(): Sampler {
    return this.#sampler;
  }
  /** Hands `decision` (and the root span's `traceId`, when it has no parent) to the next `startSpan`. */
  pass(decision: SamplingResult, traceId: string | undefined): void {
    this.#decision = decision;
    this.#traceId = traceId;
  }
  /** Drops whatever the last `startSpan` did not take. */
  clear(): void {
    this.#decision = undefined;
    this.#traceId = undefined;
  }
  shouldSample(...args: Parameters<Sampler['shouldSample']>): SamplingResult {
    const decision = this.#decision;
    if (decision === undefined) return this.#sampler.shouldSample(...args);
    this.#decision = undefined;
    return decision;
  }
  generateTraceId(): string {
    const id = this.#traceId;
    if (id === undefined) return this.#ids.generateTraceId();
    this.#traceId = undefined;
    return id;
  }
  generateSpanId(): string {
    return this.#ids.generateSpanId();
  }
  toString(): string {
    return this.#sampler.toString();
  }
}

/** The key under which the OpenTelemetry API keeps a context's span (`trace.setSpan`). */
const SPAN_KEY = createContextKey('OpenTelemetry Context Key SPAN');

/**
 * The context the propagator reads for an upstream call under a request left out by the sampler: the
 * request's incoming context (baggage, a caller's trace) with a span context of the request's trace id,
 * a fresh span id and the sampled flag off. One object per tracing step, filled for each call and
 * emptied after it (propagators read it synchronously): no span or context is made per request.
 */
class UnsampledCallContext implements Context {
  parent: Context = ROOT_CONTEXT;
  readonly spanContext: SpanContext = { traceId: '', spanId: '', traceFlags: TraceFlags.NONE, traceState: undefined, isRemote: false };
  readonly #span = trace.wrapSpanContext(this.spanContext);
  getValue(key: symbol): unknown {
    return key === SPAN_KEY ? this.#span : this.parent.getValue(key);
  }
  /** A context of its own (this one is reused): the parent with a copy of the span context, and the value. */
  setValue(key: symbol, value: unknown): Context {
    return this.#materialised().setValue(key, value);
  }
  deleteValue(key: symbol): Context {
    return this.#materialised().deleteValue(key);
  }
  #materialised(): Context {
    return trace.setSpanContext(this.parent, { ...this.spanContext });
  }
}

/** The trace of one request, kept on the request (a Fastify request decoration). */
interface RequestTrace {
  /** Sampled: the server span. */
  otelSpan: Span | null;
  /**
   * Sampled: the context holding the server span (the client spans' parent). Left out: the incoming
   * context as the propagator read it (usually the root context itself: nothing made).
   */
  otelContext: Context | null;
  /** Left out: the trace id the sampler decided on (the caller's, or a new one). */
  otelTraceId: string | null;
}

const NO_ATTRIBUTES: Attributes = Object.freeze({});
const NO_LINKS: Link[] = [];

/** `server.address` and `server.port` of an upstream origin, as the HTTP semantic conventions give them. */
function serverOf(origin: string): { scheme: string; address: string; port: number } {
  const url = new URL(origin);
  const scheme = url.protocol.slice(0, -1);
  return { scheme, address: url.hostname, port: Number(url.port || (scheme === 'https' ? 443 : 80)) };
}

/**
 * Starts the OpenTelemetry SDK for one app (see the module documentation) and gives its tracing step.
 * Registers the tracer provider and the propagators process-wide (no context manager: contexts are
 * passed explicitly); the step's close hook flushes the spans and removes that registration.
 *
 * @param setup - the endpoint, the upstream base URLs, the build id and the `OTEL_*` settings the
 *   proxy reads itself.
 * @returns the tracing step, whose plugin must be registered before any route, and the tracer of the
 *   upstream calls (for `createUpstreamServices`).
 */
export function startTracing(setup: TracingSetup): { readonly plugin: FastifyPluginAsync; readonly upstream: UpstreamTracer } {
  const resource = resourceFromAttributes({ 'service.name': 'front-proxy', 'service.version': setup.buildId }).merge(
    detectResources({ detectors: [envDetector] }),
  );
  const { protocol, unsupported } = otlpProtocol(setup.settings);
  const exporterConfig = { url: setup.tracesUrl };
  const exporter = protocol === 'http/protobuf' ? new OTLPProtobufTraceExporter(exporterConfig) : new OTLPJsonTraceExporter(exporterConfig);
  // The sampler is the SDK's, read from OTEL_TRACES_SAMPLER / OTEL_TRACES_SAMPLER_ARG. The batch
  // processor's bounds come from OTEL_BSP_* (defaults: 2,048 spans queued, 512 per export).
  const handoff = new SamplerHandoff(buildSamplerFromEnv());
  const provider = new BasicTracerProvider({
    resource,
    sampler: handoff,
    idGenerator: handoff,
    spanProcessors: [new BatchSpanProcessor(exporter)],
  });
  trace.setGlobalTracerProvider(provider);
  const propagators = propagatorNames(setup.settings.OTEL_PROPAGATORS);
  propagation.setGlobalPropagator(new CompositePropagator({ propagators: propagators.names.map(propagatorOf) }));
  const tracer: Tracer = provider.getTracer(SCOPE);
  const sampler = handoff.sampler;
  const endpointOf = endpointFinder(setup.upstreams);
  const scratch = new UnsampledCallContext();
  const servers = new Map<string, ReturnType<typeof serverOf>>();

  /** The server span of a request (sampled requests only; see the module documentation). */
  const onRequest = (request: FastifyRequest & RequestTrace, reply: FastifyReply, done: () => void): void => {
    // A health probe is no traffic: no span, no sampling decision, no trace fields.
    if (routeConfigOf(request).probe === true) {
      done();
      return;
    }
    const parent = propagation.extract(ROOT_CONTEXT, request.headers);
    const caller = trace.getSpanContext(parent);
    const remote = caller !== undefined && isSpanContextValid(caller);
    const traceId = remote ? caller.traceId : handoff.generateTraceId();
    const decision = sampler.shouldSample(parent, traceId, request.method, SpanKind.SERVER, NO_ATTRIBUTES, NO_LINKS);
    if (decision.decision === SamplingDecision.NOT_RECORD) {
      request.otelTraceId = traceId;
      request.otelContext = parent;
      bindTraceFields(request, { trace_id: traceId });
      done();
      return;
    }
    const route = (routeConfigOf(request) as { url?: string }).url;
    const attributes = serverAttributes(request, route);
    handoff.pass(decision, remote ? undefined : traceId);
    let span: Span;
    try {
      span = tracer.startSpan(
        route === undefined ? request.method : `${request.method} ${route}`,
        { kind: SpanKind.SERVER, attributes },
        parent,
      );
    } finally {
      handoff.clear();
    }
    request.otelSpan = span;
    request.otelContext = trace.setSpan(parent, span);
    const ids = span.spanContext();
    bindTraceFields(request, { trace_id: ids.traceId, span_id: ids.spanId });
    reply.raw.once('close', () => {
      const status = reply.statusCode;
      span.setAttribute('http.response.status_code', status);
      if (status >= 500) {
        // The HTTP conventions: a server span's error is a 5xx, its `error.type` the status code.
        span.setAttribute('error.type', String(status));
        span.setStatus({ code: SpanStatusCode.ERROR });
      }
      span.end();
    });
    done();
  };

  /** The client span of a sampled call, ended with its status or its failure. */
  const clientSpan = (span: Span): UpstreamSpan => {
    let ended = false;
    return {
      end(status: number, error: UpstreamError | undefined) {
        if (ended) return;
        ended = true;
        if (error === undefined) {
          span.setAttribute('http.response.status_code', status);
          if (status >= 400) {
            span.setAttribute('error.type', String(status));
            span.setStatus({ code: SpanStatusCode.ERROR });
          }
        } else if (error.code !== 'client_aborted') {
          // A client that left is no upstream failure (the HTTP conventions: a cancelled call is no error).
          span.setAttribute('error.type', error.code);
          span.setStatus({ code: SpanStatusCode.ERROR });
        }
        span.end();
      },
    };
  };

  const upstream: UpstreamTracer = {
    start(origin, root, method, base, path, headers) {
      const request = origin as (Partial<RequestTrace> & Partial<Pick<FastifyRequest, 'routeOptions'>>) | undefined;
      // The readiness probe's BFF call is no traffic either.
      if (request?.routeOptions?.config?.probe === true) return undefined;
      if (!root && request?.otelTraceId != null) {
        // A request the sampler left out: the propagation headers, nothing else.
        scratch.parent = request.otelContext ?? ROOT_CONTEXT;
        const sc = scratch.spanContext;
        sc.traceId = request.otelTraceId;
        sc.spanId = handoff.generateSpanId();
        sc.traceState = trace.getSpanContext(scratch.parent)?.traceState;
        propagation.inject(scratch, headers);
        scratch.parent = ROOT_CONTEXT;
        return undefined;
      }
      let parent: Context = ROOT_CONTEXT;
      let links: Link[] | undefined;
      if (!root && request?.otelContext != null) parent = request.otelContext;
      else if (root && request?.otelSpan != null) links = [{ context: request.otelSpan.spanContext() }];
      let server = servers.get(base);
      if (server === undefined) {
        server = serverOf(base);
        if (servers.size >= 64) servers.clear();
        servers.set(base, server);
      }
      const q = path.indexOf('?');
      const pathname = q === -1 ? path : path.slice(0, q);
      const query = q === -1 ? '' : redactQuery(path.slice(q));
      const attributes: Attributes = {
        'http.request.method': method,
        'url.full': `${base}${pathname}${query}`,
        'url.path': pathname,
        'url.query': query,
        'url.scheme': server.scheme,
        'server.address': server.address,
        'server.port': server.port,
        [ENDPOINT_ATTRIBUTE]: endpointOf(method, base, path),
      };
      const span = tracer.startSpan(method, { kind: SpanKind.CLIENT, attributes, ...(links === undefined ? {} : { links }) }, parent);
      propagation.inject(trace.setSpan(parent, span), headers);
      return span.isRecording() ? clientSpan(span) : undefined;
    },
  };

  const plugin = fp(
    async (app: FastifyInstance) => {
      diag.setLogger(diagnostics(app), DiagLogLevel.WARN);
      if (unsupported !== undefined) {
        app.log.warn({ protocol: unsupported }, 'opentelemetry: unsupported OTLP protocol, exporting over OTLP/HTTP JSON');
      }
      if (propagators.unsupported.length > 0) {
        app.log.warn({ propagators: propagators.unsupported }, 'opentelemetry: unsupported OTEL_PROPAGATORS entries left out');
      }
      app.decorateRequest('otelSpan', null);
      app.decorateRequest('otelContext', null);
      app.decorateRequest('otelTraceId', null);
      app.addHook('onRequest', onRequest as unknown as (request: FastifyRequest, reply: FastifyReply, done: () => void) => void);
      app.addHook('onClose', async () => {
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
          propagation.disable();
          diag.disable();
        }
      });
    },
    { name: 'tracing' },
  );
  return { plugin, upstream };
}
