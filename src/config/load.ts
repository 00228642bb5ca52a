/**
 * Reads the configuration of docs/behaviour.md "Configuration" from an environment: every variable
 * checked against its schema (`schema.ts`), every problem reported at once, then the frozen
 * {@link Config}, whose type is the one {@link buildConfig} returns.
 *
 * @module
 */
import { readFileSync } from 'node:fs';
import type { TSchema } from '@sinclair/typebox';
import proxyAddr from 'proxy-addr';
import { checkTokenKeys, type TokenKeys } from '../session/token-keys.js';
import { ConfigError, quoted } from './problems.js';
import { type RedisTopology, redisTopology } from './redis.js';
import { type Env, EnvSchema, readVariable, UPSTREAM_URL_VARIABLES, type UpstreamUrlVariable } from './schema.js';

/**
 * The package version, the default `BUILD_ID`: read from the package's own package.json, found
 * beside the module (`src/config/` and `dist/config/` are both two levels under it), so it holds
 * whatever the working directory.
 */
export const PACKAGE_VERSION: string = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

function checkUrl(name: string, value: string, problems: string[]): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    problems.push(`${name}: expected an absolute http(s) URL, got ${quoted(value)}`);
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    problems.push(`${name}: expected an http or https URL, got protocol ${quoted(url.protocol)}`);
    return undefined;
  }
  if (url.search || url.hash || url.username || url.password) {
    problems.push(`${name}: expected a URL without query, fragment or credentials`);
    return undefined;
  }
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

function checkTrustedProxies(value: string, problems: string[]): string[] | undefined {
  const list = value
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry.length > 0);
  const bad = list.filter((entry) => {
    try {
      proxyAddr.compile(entry);
      return false;
    } catch {
      return true;
    }
  });
  if (list.length === 0 || bad.length > 0) {
    problems.push(
      `TRUSTED_PROXIES: expected comma-separated IP addresses or CIDR ranges, such as 10.0.0.0/8,192.168.1.7, got "${(bad[0] ?? value).slice(0, 80)}"`,
    );
    return undefined;
  }
  return list;
}

function checkOrigin(value: string, problems: string[]): string | undefined {
  try {
    const url = new URL(value);
    if ((url.protocol === 'http:' || url.protocol === 'https:') && url.origin === value.replace(/\/$/, '')) {
      return url.origin;
    }
  } catch {
    // reported below
  }
  problems.push(`ALLOWED_ORIGINS: expected comma-separated origins such as https://www.example.com, got ${quoted(value)}`);
  return undefined;
}

/** What {@link loadConfig} derives from the variables before it builds the {@link Config}. */
interface Derived {
  readonly production: boolean;
  readonly upstreams: Readonly<Record<UpstreamUrlVariable, string | undefined>>;
  readonly allowedOrigins: readonly string[] | undefined;
  readonly redis: RedisTopology | undefined;
  readonly trustedProxies: readonly string[] | undefined;
  readonly otlpEndpoint: string | undefined;
  readonly otlpTracesEndpoint: string | undefined;
  readonly sessionCookieName: string;
  readonly tokenKeys: TokenKeys;
}

/**
 * The configuration built from checked variables: the one place its shape is written, so
 * {@link Config} is this function's result type (its leaves typed by {@link EnvSchema}). Times in
 * milliseconds.
 */
function buildConfig(e: Env, d: Derived) {
  return {
    port: e.PORT,
    host: e.HOST,
    nodeEnv: e.NODE_ENV,
    /** True when `NODE_ENV=production`: no dev-only routes, `Secure` cookie, `__Host-` cookie name. */
    production: d.production,
    /** Upstream base URLs (origin plus optional path prefix, no trailing slash); `undefined` when not set. */
    upstreams: Object.freeze(d.upstreams),
    /** True when no `BFF_BASE_URL` was given and the embedded sandbox serves every upstream. */
    useSandbox: d.upstreams.BFF_BASE_URL === undefined,
    /** Limit of one upstream call, headers and body, in milliseconds. */
    upstreamTimeoutMs: e.UPSTREAM_TIMEOUT_MS,
    /**
     * Largest upstream answer buffered, in bytes, counted on the received and on the decoded bytes
     * (docs/behaviour.md "Upstream answers"); the raw passthrough refuses a declared length over it and
     * cuts a stream that runs over it.
     */
    upstreamMaxResponseBytes: e.UPSTREAM_MAX_RESPONSE_BYTES,
    /** Share of the BFF's 2xx answers checked against the shapes the proxy expects, from 0 (off) to 1 (docs/behaviour.md "Operations"). */
    upstreamContractSample: e.UPSTREAM_CONTRACT_SAMPLE,
    registerType: e.REGISTER_TYPE,
    sessionCookieName: d.sessionCookieName,
    /** Origins allowed to send state-changing requests; `undefined` = the request's own origin only. */
    allowedOrigins: d.allowedOrigins === undefined ? undefined : Object.freeze(d.allowedOrigins),
    buildId: e.BUILD_ID ?? PACKAGE_VERSION,
    logLevel: e.LOG_LEVEL,
    cachePurgeToken: e.CACHE_PURGE_TOKEN,
    /** node:cluster workers started by `npm start` (1 = no cluster). */
    workers: e.WORKERS,
    /** Time to live of catalogue cache entries, in milliseconds (0 disables the cache). */
    catalogueCacheTtlMs: e.CATALOGUE_CACHE_TTL_MS,
    /** How a catalogue read with a session is answered (docs/behaviour.md "Which routes need a session"). */
    catalogueForSessions: e.CATALOGUE_FOR_SESSIONS,
    /** Prefix for payment icon URLs (spec 2.8); `undefined` = `/icons`. */
    paymentIconPrefix: e.PAYMENT_ICON_PREFIX?.replace(/\/+$/, ''),
    /**
     * The Redis deployment of the state every instance shares (docs/behaviour.md "Several instances";
     * `redis.ts`); `undefined`: the state lives in this process and only one process may serve.
     */
    redis: d.redis,
    // The optional ports and endpoints are absent, not `undefined`, when unset.
    ...(e.METRICS_PORT === undefined
      ? {}
      : { /** Port of the Prometheus metrics endpoint (docs/behaviour.md "Operations"). */ metricsPort: e.METRICS_PORT }),
    ...(e.HEALTH_PORT === undefined ? {} : { /** Port of the health listener (docs/behaviour.md "Health"). */ healthPort: e.HEALTH_PORT }),
    /** Most client connections the public listener keeps open at once (more are closed at accept); `0`: no bound. */
    maxConnections: e.MAX_CONNECTIONS,
    ...(d.otlpEndpoint === undefined
      ? {}
      : { /** Base URL of the OTLP/HTTP collector (no trailing slash; spans go to `<url>/v1/traces`). */ otlpEndpoint: d.otlpEndpoint }),
    ...(d.otlpTracesEndpoint === undefined
      ? {}
      : { /** The full URL spans are sent to, used as given. */ otlpTracesEndpoint: d.otlpTracesEndpoint }),
    /** The OpenTelemetry variables the proxy's tracing reads itself, as given (the SDK reads the rest). */
    otlpSettings: Object.freeze({
      OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: e.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL,
      OTEL_EXPORTER_OTLP_PROTOCOL: e.OTEL_EXPORTER_OTLP_PROTOCOL,
      OTEL_TRACES_SAMPLER: e.OTEL_TRACES_SAMPLER,
      OTEL_PROPAGATORS: e.OTEL_PROPAGATORS,
    }),
    /** Idle time of a kept-alive client connection before the server closes it, in milliseconds. */
    keepAliveTimeoutMs: e.KEEP_ALIVE_TIMEOUT_MS,
    /** After SIGTERM, time `/readyz` answers 503 while requests are still served, in milliseconds. */
    shutdownDelayMs: e.SHUTDOWN_DELAY_MS,
    /** Time in-flight requests get to finish once the listener is closed, in milliseconds. */
    shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_MS,
    /** Live streams of the raw passthrough (docs/behaviour.md "Live streams"); times in milliseconds. */
    streams: Object.freeze({
      idleTimeoutMs: e.STREAM_IDLE_TIMEOUT_MS,
      maxLifetimeMs: e.STREAM_MAX_LIFETIME_MS,
      perSession: e.STREAMS_PER_SESSION,
      /** Open streams per client address (IPv6 per /64). */
      perAddress: e.STREAMS_PER_ADDRESS,
      max: e.STREAMS_MAX,
    }),
    /** Load balancers whose `X-Forwarded-For` is believed (docs/behaviour.md "Rate limits and client address"); `undefined`: none. */
    trustedProxies: d.trustedProxies === undefined ? undefined : Object.freeze(d.trustedProxies),
    /** Request limits of docs/behaviour.md "Rate limits and client address"; `0` turns one off. */
    rateLimits: Object.freeze({
      preAuthPerMin: e.RATE_LIMIT_PREAUTH_PER_MIN,
      loginFailures: e.RATE_LIMIT_LOGIN_FAILURES,
      loginFailuresPerLogin: e.RATE_LIMIT_LOGIN_FAILURES_PER_LOGIN,
      beaconPerMin: e.RATE_LIMIT_BEACON_PER_MIN,
      apiPerMin: e.RATE_LIMIT_API_PER_MIN,
      apiPerAddressPerMin: e.RATE_LIMIT_API_PER_ADDRESS_PER_MIN,
    }),
    /** The per-endpoint guard of upstream calls (docs/behaviour.md "Resilience"); times in milliseconds. */
    upstreamLimits: Object.freeze({
      maxInFlight: e.UPSTREAM_ENDPOINT_MAX_IN_FLIGHT,
      maxQueue: e.UPSTREAM_ENDPOINT_QUEUE,
      queueWaitMs: e.UPSTREAM_QUEUE_WAIT_MS,
      circuitFailures: e.UPSTREAM_CIRCUIT_FAILURES,
      circuitPauseMs: e.UPSTREAM_CIRCUIT_PAUSE_MS,
    }),
    /** Load shedding (docs/behaviour.md "Resilience"); `0` turns a threshold off. */
    loadShedding: Object.freeze({
      eventLoopDelayMs: e.LOAD_SHED_EVENT_LOOP_DELAY_MS,
      maxInFlight: e.LOAD_SHED_MAX_IN_FLIGHT,
    }),
    /** The BFF's token-signing keys (`session/token-keys.ts`); `undefined`: session tokens are checked for their form only. */
    tokenKeys: d.tokenKeys,
  };
}

/** Validated, frozen configuration (docs/behaviour.md "Configuration"): what {@link buildConfig} builds. */
export type Config = Readonly<ReturnType<typeof buildConfig>>;

/**
 * Reads and validates the configuration of docs/behaviour.md "Configuration" from an environment.
 *
 * Every variable is checked, and every problem is reported at once, one line each, starting with the
 * variable's name and saying what it expects: an enumeration lists its values; a number must be a
 * plain decimal integer (`^(0|[1-9][0-9]*)$`, so no `1e3`, ` 12` or `0x10`) within its range; `HOST`
 * must be an IP address or a host name (whether this machine can bind it is
 * {@link checkHostBindable}'s question, asynchronous). With `NODE_ENV=production` the embedded sandbox
 * never starts, so `BFF_BASE_URL` and `STICKER_API_URL` are required. `METRICS_PORT` must differ
 * from `PORT` unless `PORT` is 0; `HEALTH_PORT` from both unless it is 0. An empty variable counts as unset.
 *
 * @param env - the variables (usually `process.env`); unknown variables are ignored.
 * @returns the frozen {@link Config}.
 * @throws {@link ConfigError} listing every invalid variable at once.
 * @example
 * const config = loadConfig({ PORT: '0', BFF_BASE_URL: 'https://bff.example.com/api' });
 */
export function loadConfig(env: Record<string, string | undefined> = {}): Config {
  const problems: string[] = [];
  const values: Record<string, unknown> = {};
  const invalid = new Set<string>();
  for (const [name, schema] of Object.entries(EnvSchema.properties) as [string, TSchema][]) {
    const text = env[name];
    if (text === undefined || text === '') {
      values[name] = schema.default;
      continue;
    }
    const read = readVariable(name, schema, text);
    if ('problem' in read) {
      problems.push(read.problem);
      invalid.add(name);
      values[name] = schema.default;
    } else {
      values[name] = read.value;
    }
  }
  const e = values as Env;
  const production = e.NODE_ENV === 'production' && !invalid.has('NODE_ENV');

  const upstreams = {} as Record<UpstreamUrlVariable, string | undefined>;
  for (const name of UPSTREAM_URL_VARIABLES) {
    const value = e[name];
    upstreams[name] = value === undefined ? undefined : checkUrl(name, value, problems);
  }
  if (production) {
    const required: [UpstreamUrlVariable, string][] = [
      ['BFF_BASE_URL', "the BFF's"],
      ['STICKER_API_URL', "the sticker API's"],
    ];
    for (const [name, whose] of required) {
      if (e[name] === undefined) {
        problems.push(
          `${name}: expected ${whose} absolute http(s) URL, required with NODE_ENV=production (the sandbox never starts in production)`,
        );
      }
    }
  }
  const allowedOrigins =
    e.ALLOWED_ORIGINS === undefined
      ? undefined
      : e.ALLOWED_ORIGINS.split(',')
          .map((o) => o.trim())
          .filter((o) => o.length > 0)
          .map((o) => checkOrigin(o, problems))
          .filter((o): o is string => o !== undefined);
  const redis = redisTopology(e, problems);
  const trustedProxies = e.TRUSTED_PROXIES === undefined ? undefined : checkTrustedProxies(e.TRUSTED_PROXIES, problems);
  const otlpEndpoint =
    e.OTEL_EXPORTER_OTLP_ENDPOINT === undefined
      ? undefined
      : checkUrl('OTEL_EXPORTER_OTLP_ENDPOINT', e.OTEL_EXPORTER_OTLP_ENDPOINT, problems);
  const otlpTracesEndpoint =
    e.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT === undefined
      ? undefined
      : checkUrl('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', e.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, problems);
  if (e.WORKERS > 1 && e.REDIS_URL === undefined && e.REDIS_SENTINELS === undefined && e.REDIS_CLUSTER_NODES === undefined) {
    problems.push(
      `WORKERS: ${e.WORKERS} processes need REDIS_URL (or REDIS_SENTINELS, REDIS_CLUSTER_NODES), so that they share the money moves' records and the caches (docs/behaviour.md "Several instances"); set REDIS_URL or WORKERS=1`,
    );
  }
  if (e.METRICS_PORT !== undefined && !invalid.has('PORT') && e.PORT !== 0 && e.METRICS_PORT === e.PORT) {
    problems.push(
      `METRICS_PORT: expected a port other than PORT (${e.PORT}): metrics are never served on the public port, got ${quoted(String(e.METRICS_PORT))}`,
    );
  }
  if (e.HEALTH_PORT !== undefined && e.HEALTH_PORT !== 0) {
    for (const [name, other] of [
      ['PORT', e.PORT],
      ['METRICS_PORT', e.METRICS_PORT],
    ] as const) {
      if (!invalid.has(name) && other === e.HEALTH_PORT) {
        problems.push(`HEALTH_PORT: expected a port other than ${name} (${other}), got ${quoted(String(e.HEALTH_PORT))}`);
      }
    }
  }
  const sessionCookieName = e.SESSION_COOKIE_NAME ?? (production ? '__Host-access_token' : 'access_token');
  const tokenKeys = checkTokenKeys(e.JWT_JWKS_URL, e.JWT_PUBLIC_KEY, e.JWT_SECRET, problems);
  if (problems.length > 0) throw new ConfigError(problems);

  return Object.freeze(
    buildConfig(e, {
      production,
      upstreams,
      allowedOrigins,
      redis,
      trustedProxies,
      otlpEndpoint,
      otlpTracesEndpoint,
      sessionCookieName,
      tokenKeys,
    }),
  );
}

/**
 * Returns a copy of `config` with the given upstream URLs filled where they were not set
 * (used when the embedded sandbox serves every upstream).
 */
export function withUpstreams(config: Config, urls: Partial<Record<UpstreamUrlVariable, string>>): Config {
  const upstreams = { ...config.upstreams };
  for (const name of UPSTREAM_URL_VARIABLES) {
    if (upstreams[name] === undefined && urls[name] !== undefined) upstreams[name] = urls[name];
  }
  return Object.freeze({ ...config, upstreams: Object.freeze(upstreams) });
}
