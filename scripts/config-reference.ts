/**
 * The configuration reference, docs/configuration.md "Variables", generated from the configuration
 * schema (`EnvSchema` of `src/config/schema.ts`): one row per variable or group of variables, in
 * {@link CONFIG_ROWS} order, with an anchor per variable (`docs/configuration.md#redis_url`), its
 * default (the schema's, unless the row says what is computed instead), the values it accepts (read
 * from the schema) and its meaning. `npm run docs:config` writes the table between the page's
 * markers; `test/config-reference.test.ts` fails when the page and the schema differ, in either
 * direction, and when a variable is described (its default stated) anywhere else.
 *
 * A variable added to the schema needs a row here (or a `description` in the schema): the generator
 * refuses a variable it cannot explain.
 *
 * @module
 */
import type { TSchema } from '@sinclair/typebox';
import { EnvSchema } from '../src/config.js';

/** One row of the table. */
export interface ConfigRow {
  /** The variables the row explains (several for a group such as the two referral URLs). */
  readonly variables: readonly string[];
  /** What the default is, when it is not the schema's `default` (computed, or "sandbox"). */
  readonly defaultText?: string;
  /** What the variable accepts, when the schema alone does not say it (URLs are checked after it). */
  readonly accepts?: string;
  readonly meaning: string;
}

/** The rows of the table, in the page's order. */
export const CONFIG_ROWS: readonly ConfigRow[] = [
  { variables: ['PORT'], meaning: 'listen port (`0` = any free port; the log prints the one chosen)' },
  { variables: ['HOST'], meaning: 'listen address (`0.0.0.0` in a container)' },
  {
    variables: ['NODE_ENV'],
    meaning:
      '`production` removes the development-only routes and the API reference (docs/behaviour.md "Development-only routes"), starts no sandbox, and names the session cookie `__Host-access_token`',
  },
  {
    variables: ['BFF_BASE_URL'],
    defaultText: 'sandbox',
    accepts: 'http(s) URL',
    meaning:
      'origin plus optional path prefix that upstream paths resolve against; unset, `npm start` starts the embedded sandbox (not in production, where it is required: the process stops at start without it)',
  },
  {
    variables: ['STICKER_API_URL'],
    defaultText: 'sandbox',
    accepts: 'http(s) URL',
    meaning: 'the sticker-album API; required in production like `BFF_BASE_URL` (the process stops at start without it)',
  },
  {
    variables: ['REFERRAL_V1_API_URL', 'REFERRAL_V2_API_URL'],
    defaultText: 'sandbox',
    accepts: 'http(s) URL',
    meaning: 'referral services (external)',
  },
  {
    variables: ['FTD_CASHBACK_VERIFY_URL', 'FTD_CASHBACK_SEND_URL'],
    defaultText: 'sandbox',
    accepts: 'http(s) URL',
    meaning: 'full URLs of the cashback function endpoints',
  },
  { variables: ['ATTRIBUTION_S2S_URL'], defaultText: 'sandbox', accepts: 'http(s) URL', meaning: 'full URL of the attribution provider' },
  {
    variables: ['CACHE_PURGE_URL'],
    defaultText: 'sandbox',
    accepts: 'http(s) URL',
    meaning: 'full URL of the worker-cache purge endpoint',
  },
  { variables: ['UPSTREAM_TIMEOUT_MS'], meaning: 'limit for one upstream call, headers and body (milliseconds)' },
  {
    variables: ['UPSTREAM_MAX_RESPONSE_BYTES'],
    meaning:
      'largest upstream answer the proxy buffers (bytes), counted on the received and on the decoded bytes of a coded answer; over it: 502 `upstream_response_too_large`. The raw passthrough refuses a declared length over it before sending anything and cuts a stream that runs over it',
  },
  {
    variables: ['UPSTREAM_CONTRACT_SAMPLE'],
    accepts: 'decimal 0–1',
    meaning:
      'share of the BFF\'s 2xx answers checked against the shapes the proxy expects (the doctor\'s), off the request\'s path (`0` off, `1` every answer, for staging); findings are counted in `front_proxy_upstream_contract_findings_total` and logged (`event: "upstream-contract"`, EP code and JSON path, never a value), never change an answer (docs/operations.md "Upstream contract checks")',
  },
  {
    variables: ['REGISTER_TYPE'],
    meaning:
      '`bff-simplified` → `POST /bff/register-simplified`, `classic` → `POST /auth/register`, `simplified` → `POST /auth/register/simplified`; a body with a social `provider` always goes to `POST /bff/social/{provider}/registerSimplified`',
  },
  {
    variables: ['SESSION_COOKIE_NAME'],
    defaultText: '`access_token`; `__Host-access_token` in production',
    accepts: 'cookie name, 1–64 token characters',
    meaning: 'name of the HttpOnly cookie that holds the JWT',
  },
  {
    variables: ['ALLOWED_ORIGINS'],
    defaultText: "the request's own origin",
    accepts: 'comma-separated origins',
    meaning: 'origins allowed to send state-changing requests (CSRF defence)',
  },
  { variables: ['BUILD_ID'], defaultText: 'package version', meaning: 'what `GET /api/version` returns' },
  { variables: ['LOG_LEVEL'], meaning: 'pino level; outside production, logs are pretty-printed when standard output is a terminal' },
  {
    variables: ['CACHE_PURGE_TOKEN'],
    defaultText: 'none',
    meaning: 'operator credential for `/api/cache/purge` (`Authorization: Bearer …`)',
  },
  {
    variables: ['WORKERS'],
    meaning: 'processes on this host (node:cluster); more than 1 requires Redis (`REDIS_URL`, `REDIS_SENTINELS` or `REDIS_CLUSTER_NODES`)',
  },
  { variables: ['CATALOGUE_CACHE_TTL_MS'], meaning: 'time to live of the game catalogue cache (milliseconds; `0` disables it)' },
  {
    variables: ['CATALOGUE_FOR_SESSIONS'],
    meaning:
      '`shared`: the catalogue reads (spec 4.6 "cacheable", "cache first", "from cache only") are answered from the one shared cache with or without a session, fetched without the user\'s cookie or token; `forward`: a read with a session is forwarded with it and not cached (for a BFF that personalises its catalogue)',
  },
  {
    variables: ['PAYMENT_ICON_PREFIX'],
    defaultText: '`/icons`',
    meaning: 'prefix of payment icon URLs (`<prefix>/payments/<method>.svg`)',
  },
  {
    variables: ['REDIS_URL'],
    defaultText: 'none',
    accepts: '`redis://` or `rediss://` URL',
    meaning:
      'the state every instance shares (money-move records, caches, counters); without it all state is in process memory and only one process may serve',
  },
  {
    variables: ['REDIS_SENTINELS', 'REDIS_SENTINEL_NAME'],
    defaultText: 'none',
    accepts: '`host:port,…` (port 26379 when left out); a name',
    meaning:
      "instead of `REDIS_URL`: the sentinels and the primary's name as they monitor it (Redis Sentinel); the proxy follows a failover to the promoted replica without a restart",
  },
  {
    variables: ['REDIS_CLUSTER_NODES'],
    defaultText: 'none',
    accepts: '`host:port,…` (port 6379 when left out)',
    meaning:
      'instead of `REDIS_URL`: seed nodes of a Redis cluster (cluster mode); the others are discovered. Exactly one of `REDIS_URL`, `REDIS_SENTINELS`, `REDIS_CLUSTER_NODES`',
  },
  {
    variables: ['REDIS_PASSWORD', 'REDIS_SENTINEL_PASSWORD'],
    defaultText: 'none',
    meaning:
      "with `REDIS_SENTINELS` or `REDIS_CLUSTER_NODES`: the Redis servers' password, and the sentinels' (with `REDIS_URL` the password goes in the URL)",
  },
  {
    variables: ['REDIS_TLS'],
    defaultText: '`false`',
    meaning:
      'with `REDIS_SENTINELS` or `REDIS_CLUSTER_NODES`: `true` connects to the servers (and the sentinels) over TLS (with `REDIS_URL`: `rediss://`)',
  },
  {
    variables: ['REDIS_MIN_REPLICAS_ACK'],
    defaultText: '`auto` with `REDIS_SENTINELS` or `REDIS_CLUSTER_NODES`; `0` with `REDIS_URL`',
    accepts: '`auto` \\| integer 0–16',
    meaning:
      'which replicas must acknowledge a deposit\'s or withdraw\'s record (`WAIT`) before it goes upstream: `auto`, every replica that could be promoted; a number, a floor under that (with `REDIS_URL`: that many replicas, whatever they are). Not all in time: 503 `idempotency_unavailable`, nothing sent (docs/behaviour.md "Several instances"; what each topology and value costs: docs/operations.md "Redis topologies"). With `REDIS_URL` and `0`, the start logs a warning when the server has replicas',
  },
  {
    variables: ['TRUSTED_PROXIES'],
    defaultText: 'none',
    meaning:
      "load balancers whose `X-Forwarded-For` is believed: the client address is then the right-most untrusted one of that header (else the socket's); upstream calls carry the chain ending in it, and the rate limits count by it",
  },
  {
    variables: ['RATE_LIMIT_PREAUTH_PER_MIN'],
    meaning:
      'login, register, recovery, social and validate-document requests per client address (IPv6: per /64) per minute, together (`0` turns it off); over it: 429 `rate_limited`',
  },
  {
    variables: ['RATE_LIMIT_LOGIN_FAILURES'],
    meaning:
      'failed logins (the second-factor step included) per login identifier and client address (IPv6: per /64) per 15 minutes (`0` turns it off); the identifier is counted in its canonical form (an e-mail or user name: NFKC, trimmed, lower-case; a document number such as a CPF: its digits only) and kept as an HMAC',
  },
  {
    variables: ['RATE_LIMIT_LOGIN_FAILURES_PER_LOGIN'],
    meaning:
      'failed logins per login identifier over all client addresses per 15 minutes (`0` turns it off): a guess spread over many addresses stops here. A user can be locked out by someone else once this many failures are reached, so it stays well above `RATE_LIMIT_LOGIN_FAILURES`',
  },
  {
    variables: ['RATE_LIMIT_BEACON_PER_MIN'],
    meaning: 'forced-logout beacons (`/api/logs/auth-logout`) per client address (IPv6: per /64) per minute (`0` turns it off)',
  },
  {
    variables: ['RATE_LIMIT_API_PER_MIN'],
    meaning:
      'every other `/api` request per session, or per client address without one, per minute, counted per process (`0` turns it off)',
  },
  {
    variables: ['UPSTREAM_ENDPOINT_MAX_IN_FLIGHT'],
    meaning:
      "calls of one upstream endpoint (EP code) running at once: a quarter of the 128 connections of an origin, so one slow endpoint leaves the others room (money moves and the session's calls have a pool of their own)",
  },
  {
    variables: ['UPSTREAM_ENDPOINT_QUEUE'],
    meaning:
      'calls of one endpoint that may wait for a slot, each for at most `UPSTREAM_QUEUE_WAIT_MS` (`0`: none wait); over it: 503 `upstream_busy` at once, nothing sent. Why the default is this large: docs/operations.md "Upstream faults and overload"',
  },
  {
    variables: ['UPSTREAM_QUEUE_WAIT_MS'],
    meaning: 'longest wait for a slot (milliseconds); then 503 `upstream_busy` with `Retry-After`, nothing sent',
  },
  {
    variables: ['UPSTREAM_CIRCUIT_FAILURES'],
    meaning:
      "timeouts, connection failures or 502/503/504 answers in a row that open an endpoint's circuit (`0` turns the breaker off); open: 503 `upstream_circuit_open` at once",
  },
  {
    variables: ['UPSTREAM_CIRCUIT_PAUSE_MS'],
    meaning:
      "how long an open circuit refuses calls before one trial call decides whether it closes (milliseconds); the trial goes only with a free slot, one more per pause while earlier ones still wait (at most 3), and only a trial's outcome closes or reopens the circuit",
  },
  {
    variables: ['LOAD_SHED_EVENT_LOOP_DELAY_MS'],
    meaning:
      'mean event-loop delay (milliseconds, sampled every 250 ms) above which new `/api` requests answer 503 `overloaded` until it falls (`0` turns it off); health and metrics are never shed',
  },
  {
    variables: ['LOAD_SHED_MAX_IN_FLIGHT'],
    meaning: '`/api` requests in progress above which new ones answer 503 `overloaded` (`0` turns it off)',
  },
  {
    variables: ['MAX_CONNECTIONS'],
    meaning:
      'client connections `PORT` keeps open at once; one more is closed as soon as it is accepted, before a byte is read. `0`: no bound. Keep a bound above the connections a load balancer opens to one process, and set `HEALTH_PORT` with it (docs/operations.md "Upstream faults and overload")',
  },
  {
    variables: ['RATE_LIMIT_API_PER_ADDRESS_PER_MIN'],
    meaning:
      'the same requests per client address (IPv6: per /64) over all its sessions, per minute, counted per process (`0` turns it off): a made-up session token costs nothing to mint, so this ceiling holds whatever cookies an address rotates. With `JWT_*` verification, a request whose token verified is not counted (a carrier NAT puts many players behind one address); anonymous requests and tokens that passed unverified are',
  },
  {
    variables: ['JWT_JWKS_URL', 'JWT_PUBLIC_KEY', 'JWT_SECRET'],
    defaultText: 'none',
    accepts:
      'http(s) URL of a JWKS, a PEM public key, never a private one (RSA or RSA-PSS of 2048 bits or more, EC P-256/P-384/P-521, Ed25519), or an HMAC secret of at least 32 bytes (one of them)',
    meaning:
      'the BFF\'s token-signing keys, at most one of them: a session token is then verified before any upstream call (401 `invalid_token`, or `token_expired`), the algorithms following the key, never `none` (docs/operations.md "Session token verification"). Without them a token is checked for its form only',
  },
  {
    variables: ['METRICS_PORT'],
    defaultText: 'none',
    meaning: 'serve Prometheus metrics at `GET /metrics` on this port (same `HOST`); never the public `PORT`',
  },
  {
    variables: ['HEALTH_PORT'],
    defaultText: 'none',
    meaning:
      'also serve `GET /healthz` and `GET /readyz` on a listener of their own on this port (same `HOST`; any other path 404; at most 64 connections, 5 s each): point the liveness and readiness probes at it, so that a storm of connections on `PORT` (its accept queue, `MAX_CONNECTIONS`) never makes a probe wait or refuses it. `PORT` serves both too',
  },
  {
    variables: ['OTEL_EXPORTER_OTLP_ENDPOINT'],
    defaultText: 'none',
    accepts: 'http(s) URL',
    meaning:
      'turns on OpenTelemetry tracing, exported over OTLP/HTTP (JSON, or protobuf with `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=http/protobuf`) to `<url>/v1/traces`: a server span per request, a client span per upstream call, made by the proxy through the OpenTelemetry API and SDK; the headers of the propagators sent upstream (`OTEL_PROPAGATORS`); the standard `OTEL_*` variables apply (`OTEL_SERVICE_NAME`, `OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_TRACES_SAMPLER_ARG`, `OTEL_BSP_SCHEDULE_DELAY`…). Unset (and `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` unset too), nothing of OpenTelemetry is loaded',
  },
  {
    variables: ['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'],
    defaultText: 'none',
    accepts: 'http(s) URL',
    meaning:
      "the full URL spans are sent to, used as given instead of `<OTEL_EXPORTER_OTLP_ENDPOINT>/v1/traces` (the OTLP exporter's own rule); set alone, it turns tracing on too",
  },
  {
    variables: ['OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', 'OTEL_EXPORTER_OTLP_PROTOCOL'],
    defaultText: '`http/json`',
    accepts: '`http/json` \\| `http/protobuf`',
    meaning: 'the encoding of the exported spans (the traces variable wins); `grpc` is not served: JSON is used, with a warning line',
  },
  {
    variables: ['OTEL_TRACES_SAMPLER'],
    defaultText: '`parentbased_always_on`',
    accepts: 'a sampler name of the OpenTelemetry SDK',
    meaning:
      "which requests are traced, with `OTEL_TRACES_SAMPLER_ARG` (e.g. `parentbased_traceidratio` and `0.1`: one request in ten, or as the caller's `traceparent` decided). An unsampled request costs one sampling decision and its propagation headers: no span, nothing exported; its upstream calls still carry `traceparent` (sampled flag off)",
  },
  {
    variables: ['OTEL_PROPAGATORS'],
    defaultText: '`tracecontext,baggage`',
    accepts: 'comma-separated: `tracecontext`, `baggage`, `b3`, `b3multi`, `none`',
    meaning:
      'the trace context formats read from a request and written on its upstream calls: W3C `traceparent`/`tracestate`, W3C `baggage`, B3 in one `b3` header or in `X-B3-*` headers; other names are left out, with a warning line',
  },
  {
    variables: ['KEEP_ALIVE_TIMEOUT_MS'],
    meaning: "idle keep-alive time of client connections (milliseconds); longer than a load balancer's idle timeout",
  },
  {
    variables: ['SHUTDOWN_DELAY_MS'],
    meaning: 'after SIGTERM, time `/readyz` answers 503 while requests are still served, before the listener closes (milliseconds)',
  },
  {
    variables: ['SHUTDOWN_TIMEOUT_MS'],
    meaning: 'time in-flight requests get to finish after the listener closes (milliseconds); the ones still open are then cut',
  },
  {
    variables: ['STREAM_IDLE_TIMEOUT_MS'],
    meaning:
      'a live stream\'s longest silence from upstream once its headers came (milliseconds); then it ends cleanly between events (docs/behaviour.md "Live streams"). Longer than the upstream\'s heartbeat',
  },
  {
    variables: ['STREAM_MAX_LIFETIME_MS'],
    meaning:
      "a live stream's longest life (milliseconds); then it ends cleanly between events with a jittered `retry:` hint, so that clients reconnect and long connections rebalance across instances",
  },
  {
    variables: ['STREAMS_PER_SESSION'],
    meaning: 'open live streams per session; one more answers 429 `rate_limited` with `Retry-After`, before any upstream connection',
  },
  {
    variables: ['STREAMS_PER_ADDRESS'],
    meaning: 'open live streams per client address (IPv6 per /64), sessions or not; one more answers 429 `rate_limited` with `Retry-After`',
  },
  {
    variables: ['STREAMS_MAX'],
    meaning:
      'open live streams of the process (each holds one client connection, and one upstream connection unless it shares an anonymous feed); one more answers 503 `overloaded` with `Retry-After`',
  },
];

/** The Markdown table's header. */
const HEADER = ['| variable | default | accepts | meaning |', '|---|---|---|---|'];

type Schema = TSchema & Record<string, unknown>;

function code(value: unknown): string {
  return `\`${String(value)}\``;
}

/** The anchor of a variable's entry in docs/configuration.md: its name in lower case (`redis_url`). */
export function configAnchor(variable: string): string {
  return variable.toLowerCase();
}

/** The first cell of a row: each variable with the anchor of its entry. */
function variableCell(names: readonly string[]): string {
  return names.map((n) => `<a id="${configAnchor(n)}"></a>${code(n)}`).join(', ');
}

/** What a schema accepts, in words: `integer 0–65535`, `` `a` \| `b` ``, `text, at least 16 characters`. */
export function accepted(schema: Schema): string {
  if (Array.isArray(schema.anyOf)) {
    const members = schema.anyOf as Schema[];
    if (members.every((m) => m.const !== undefined)) return members.map((m) => code(m.const)).join(' \\| ');
  }
  if (schema.type === 'integer' || schema.type === 'number') {
    const min = schema.minimum as number | undefined;
    const max = schema.maximum as number | undefined;
    const range = min !== undefined && max !== undefined ? ` ${min}–${max}` : min !== undefined ? ` ≥ ${min}` : '';
    return `${schema.type}${range}`;
  }
  if (schema.type === 'string') {
    const min = schema.minLength as number | undefined;
    const max = schema.maxLength as number | undefined;
    if (min !== undefined && min > 1 && max !== undefined) return `text, ${min}–${max} characters`;
    if (min !== undefined && min > 1) return `text, at least ${min} characters`;
    if (max !== undefined) return `text, at most ${max} characters`;
    return 'text';
  }
  return 'any';
}

function defaultOf(schema: Schema, row: ConfigRow | undefined): string {
  if (row?.defaultText !== undefined) return row.defaultText;
  if (schema.default !== undefined) return code(schema.default);
  return 'none';
}

/**
 * The configuration table as Markdown lines.
 *
 * @param schema - the configuration schema (default `EnvSchema`).
 * @param rows - the rows' texts (default {@link CONFIG_ROWS}).
 * @throws Error when a variable of the schema has no row and no `description`, or a row names a
 *   variable the schema does not have.
 */
export function renderConfigTable(
  schema: { properties: Record<string, TSchema> } = EnvSchema,
  rows: readonly ConfigRow[] = CONFIG_ROWS,
): string[] {
  const properties = schema.properties as Record<string, Schema>;
  const problems: string[] = [];
  for (const row of rows) {
    for (const name of row.variables)
      if (!(name in properties)) problems.push(`${name} has a row but is not a variable of the configuration schema`);
  }
  const lines = [...HEADER];
  const done = new Set<string>();
  const emit = (row: ConfigRow | undefined, names: readonly string[]) => {
    const first = properties[names[0] as string] as Schema;
    const meaning = row?.meaning ?? (typeof first.description === 'string' ? first.description : undefined);
    if (meaning === undefined) {
      problems.push(`${names.join(', ')}: no row in scripts/config-reference.ts and no description in the schema`);
      return;
    }
    const accepts = row?.accepts ?? accepted(first);
    lines.push(`| ${variableCell(names)} | ${defaultOf(first, row)} | ${accepts} | ${meaning} |`);
    for (const n of names) done.add(n);
  };
  for (const row of rows) {
    const present = row.variables.filter((n) => n in properties);
    if (present.length > 0) emit(row, present);
  }
  for (const name of Object.keys(properties)) if (!done.has(name)) emit(undefined, [name]);
  if (problems.length > 0) throw new Error(`configuration table: ${problems.join('; ')}`);
  return lines;
}

/** The page the table lives in, from the repository's root. */
export const CONFIG_PAGE = 'docs/configuration.md';

/** The page's markers around the generated table. */
export const CONFIG_TABLE_START = '<!-- configuration table: generated from src/config/schema.ts by npm run docs:config -->';
export const CONFIG_TABLE_END = '<!-- end of the configuration table -->';

/**
 * The page with its configuration table replaced by the generated one.
 *
 * @throws Error when the page lacks the markers.
 */
export function withConfigTable(page: string, table: readonly string[] = renderConfigTable()): string {
  const start = page.indexOf(CONFIG_TABLE_START);
  const end = page.indexOf(CONFIG_TABLE_END);
  if (start === -1 || end < start) throw new Error(`${CONFIG_PAGE} has no configuration table markers`);
  return `${page.slice(0, start + CONFIG_TABLE_START.length)}\n${table.join('\n')}\n${page.slice(end)}`;
}

/** The variables a Markdown table's rows name (first column), in order. */
export function tableVariables(lines: readonly string[]): string[] {
  return lines
    .filter((l) => /^\| (?:<a id="[^"]*"><\/a>)?`/.test(l))
    .flatMap((l) =>
      (l.split('|')[1] ?? '').split(',').map((cell) =>
        cell
          .replace(/<a id="[^"]*"><\/a>/g, '')
          .trim()
          .replace(/`/g, ''),
      ),
    );
}
