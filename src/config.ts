/**
 * Configuration of the proxy: one schema for every environment variable of docs/behaviour.md
 * "Configuration", validated at start with every problem reported at once, then frozen.
 *
 * @module
 */
import { createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import { isIP, createServer as createNetServer } from 'node:net';
import { type Static, type TSchema, Kind, Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import proxyAddr from 'proxy-addr';

/** The `REGISTER_TYPE` values of docs/behaviour.md "Configuration" and the upstream each selects (spec 4.1). */
export const REGISTER_TYPES = ['bff-simplified', 'classic', 'simplified'] as const;
export type RegisterType = (typeof REGISTER_TYPES)[number];

/** The `CATALOGUE_FOR_SESSIONS` values of docs/behaviour.md "Configuration": how a catalogue read with a session is answered (spec 4.6). */
export const CATALOGUE_FOR_SESSIONS_MODES = ['shared', 'forward'] as const;
export type CatalogueForSessions = (typeof CATALOGUE_FOR_SESSIONS_MODES)[number];

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** Longest time a millisecond setting accepts (10 minutes). */
const MAX_MS = 600_000;

/**
 * Environment variables as they arrive (strings), before conversion. An integer is checked by its
 * bounds, an enumeration by its literals; every other variable says what it expects in `description`
 * (the error line quotes it). `secret` variables are never echoed in an error line. Also the source of
 * the README's configuration table (`npm run docs:config`).
 */
/** Largest `REDIS_MIN_REPLICAS_ACK`: replicas that must acknowledge a money move's records. */
export const MAX_REPLICAS_ACK = 16;

export const EnvSchema = Type.Object({
  PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 3000 }),
  HOST: Type.String({ minLength: 1, default: '127.0.0.1', description: 'an IPv4 or IPv6 address (without brackets) or a host name' }),
  NODE_ENV: Type.Union([Type.Literal('development'), Type.Literal('production'), Type.Literal('test')], {
    default: 'development',
  }),
  BFF_BASE_URL: Type.Optional(Type.String()),
  STICKER_API_URL: Type.Optional(Type.String()),
  REFERRAL_V1_API_URL: Type.Optional(Type.String()),
  REFERRAL_V2_API_URL: Type.Optional(Type.String()),
  FTD_CASHBACK_VERIFY_URL: Type.Optional(Type.String()),
  FTD_CASHBACK_SEND_URL: Type.Optional(Type.String()),
  ATTRIBUTION_S2S_URL: Type.Optional(Type.String()),
  CACHE_PURGE_URL: Type.Optional(Type.String()),
  UPSTREAM_TIMEOUT_MS: Type.Integer({ minimum: 1, maximum: MAX_MS, default: 15_000 }),
  UPSTREAM_MAX_RESPONSE_BYTES: Type.Integer({ minimum: 1_024, maximum: 1_073_741_824, default: 4_194_304 }),
  UPSTREAM_CONTRACT_SAMPLE: Type.Number({ minimum: 0, maximum: 1, default: 0.01 }),
  REGISTER_TYPE: Type.Union(
    REGISTER_TYPES.map((t) => Type.Literal(t)),
    { default: 'bff-simplified' },
  ),
  SESSION_COOKIE_NAME: Type.Optional(
    Type.String({
      pattern: "^[!#$%&'*+\\-.^_`|~0-9A-Za-z]{1,64}$",
      description: "a cookie name of 1 to 64 letters, digits or !#$%&'*+-.^_`|~",
    }),
  ),
  ALLOWED_ORIGINS: Type.Optional(Type.String()),
  BUILD_ID: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: 'at most 128 characters' })),
  LOG_LEVEL: Type.Union(
    LOG_LEVELS.map((l) => Type.Literal(l)),
    { default: 'info' },
  ),
  CACHE_PURGE_TOKEN: Type.Optional(Type.String({ minLength: 16, description: 'at least 16 characters', secret: true })),
  WORKERS: Type.Integer({ minimum: 1, maximum: 64, default: 1 }),
  CATALOGUE_CACHE_TTL_MS: Type.Integer({ minimum: 0, maximum: 86_400_000, default: 60_000 }),
  CATALOGUE_FOR_SESSIONS: Type.Union(
    CATALOGUE_FOR_SESSIONS_MODES.map((m) => Type.Literal(m)),
    { default: 'shared' },
  ),
  PAYMENT_ICON_PREFIX: Type.Optional(Type.String({ minLength: 1 })),
  REDIS_URL: Type.Optional(Type.String({ secret: true })),
  REDIS_SENTINELS: Type.Optional(Type.String({ description: 'comma-separated host:port addresses' })),
  REDIS_SENTINEL_NAME: Type.Optional(Type.String({ minLength: 1 })),
  REDIS_CLUSTER_NODES: Type.Optional(Type.String({ description: 'comma-separated host:port addresses' })),
  REDIS_PASSWORD: Type.Optional(Type.String({ secret: true })),
  REDIS_SENTINEL_PASSWORD: Type.Optional(Type.String({ secret: true })),
  REDIS_TLS: Type.Optional(Type.Union([Type.Literal('true'), Type.Literal('false')])),
  REDIS_MIN_REPLICAS_ACK: Type.Optional(Type.String({ description: `auto or a plain decimal integer from 0 to ${MAX_REPLICAS_ACK}` })),
  METRICS_PORT: Type.Optional(Type.Integer({ minimum: 0, maximum: 65535 })),
  HEALTH_PORT: Type.Optional(Type.Integer({ minimum: 0, maximum: 65535 })),
  MAX_CONNECTIONS: Type.Integer({ minimum: 0, maximum: 1_000_000, default: 0 }),
  OTEL_EXPORTER_OTLP_ENDPOINT: Type.Optional(Type.String()),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: Type.Optional(Type.String()),
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: Type.Optional(Type.String()),
  OTEL_EXPORTER_OTLP_PROTOCOL: Type.Optional(Type.String()),
  OTEL_TRACES_SAMPLER: Type.Optional(Type.String()),
  OTEL_PROPAGATORS: Type.Optional(Type.String()),
  KEEP_ALIVE_TIMEOUT_MS: Type.Integer({ minimum: 1, maximum: MAX_MS, default: 65_000 }),
  SHUTDOWN_DELAY_MS: Type.Integer({ minimum: 0, maximum: MAX_MS, default: 0 }),
  SHUTDOWN_TIMEOUT_MS: Type.Integer({ minimum: 0, maximum: MAX_MS, default: 10_000 }),
  STREAM_IDLE_TIMEOUT_MS: Type.Integer({ minimum: 1_000, maximum: MAX_MS, default: 60_000 }),
  STREAM_MAX_LIFETIME_MS: Type.Integer({ minimum: 1_000, maximum: 86_400_000, default: 900_000 }),
  STREAMS_PER_SESSION: Type.Integer({ minimum: 1, maximum: 1_000, default: 8 }),
  STREAMS_PER_ADDRESS: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 64 }),
  STREAMS_MAX: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 10_000 }),
  TRUSTED_PROXIES: Type.Optional(Type.String({ description: 'comma-separated IP addresses or CIDR ranges, such as 10.0.0.0/8,192.168.1.7' })),
  RATE_LIMIT_PREAUTH_PER_MIN: Type.Integer({ minimum: 0, maximum: 1_000_000, default: 20 }),
  RATE_LIMIT_LOGIN_FAILURES: Type.Integer({ minimum: 0, maximum: 1_000_000, default: 5 }),
  RATE_LIMIT_LOGIN_FAILURES_PER_LOGIN: Type.Integer({ minimum: 0, maximum: 1_000_000, default: 50 }),
  RATE_LIMIT_BEACON_PER_MIN: Type.Integer({ minimum: 0, maximum: 1_000_000, default: 10 }),
  RATE_LIMIT_API_PER_MIN: Type.Integer({ minimum: 0, maximum: 1_000_000, default: 600 }),
  UPSTREAM_ENDPOINT_MAX_IN_FLIGHT: Type.Integer({ minimum: 1, maximum: 10_000, default: 32 }),
  UPSTREAM_ENDPOINT_QUEUE: Type.Integer({ minimum: 0, maximum: 100_000, default: 384 }),
  UPSTREAM_QUEUE_WAIT_MS: Type.Integer({ minimum: 1, maximum: MAX_MS, default: 1_000 }),
  UPSTREAM_CIRCUIT_FAILURES: Type.Integer({ minimum: 0, maximum: 10_000, default: 5 }),
  UPSTREAM_CIRCUIT_PAUSE_MS: Type.Integer({ minimum: 1, maximum: MAX_MS, default: 5_000 }),
  LOAD_SHED_EVENT_LOOP_DELAY_MS: Type.Integer({ minimum: 0, maximum: MAX_MS, default: 200 }),
  LOAD_SHED_MAX_IN_FLIGHT: Type.Integer({ minimum: 0, maximum: 1_000_000, default: 2_000 }),
  RATE_LIMIT_API_PER_ADDRESS_PER_MIN: Type.Integer({ minimum: 0, maximum: 1_000_000, default: 6_000 }),
  JWT_JWKS_URL: Type.Optional(Type.String({ description: "an absolute http(s) URL of the BFF's JSON Web Key Set" })),
  JWT_PUBLIC_KEY: Type.Optional(Type.String({ minLength: 1, description: "the BFF's token-signing public key in PEM, never its private key (literal \\n accepted as line breaks)" })),
  JWT_SECRET: Type.Optional(Type.String({ description: 'at least 32 bytes: the HMAC secret of an HS256/384/512 BFF', secret: true })),
});
type Env = Static<typeof EnvSchema>;

/** The upstream URLs of docs/behaviour.md "Configuration", by variable name. */
export const UPSTREAM_URL_VARIABLES = [
  'BFF_BASE_URL',
  'STICKER_API_URL',
  'REFERRAL_V1_API_URL',
  'REFERRAL_V2_API_URL',
  'FTD_CASHBACK_VERIFY_URL',
  'FTD_CASHBACK_SEND_URL',
  'ATTRIBUTION_S2S_URL',
  'CACHE_PURGE_URL',
] as const;
export type UpstreamUrlVariable = (typeof UPSTREAM_URL_VARIABLES)[number];

/** Validated, frozen configuration. Times in milliseconds. */
export interface Config {
  readonly port: number;
  readonly host: string;
  readonly nodeEnv: 'development' | 'production' | 'test';
  /** True when `NODE_ENV=production`: no dev-only routes, `Secure` cookie, `__Host-` cookie name. */
  readonly production: boolean;
  /** Upstream base URLs (origin plus optional path prefix, no trailing slash); `undefined` when not set. */
  readonly upstreams: Readonly<Record<UpstreamUrlVariable, string | undefined>>;
  /** True when no `BFF_BASE_URL` was given and the embedded sandbox serves every upstream. */
  readonly useSandbox: boolean;
  /** Limit of one upstream call, headers and body, in milliseconds. */
  readonly upstreamTimeoutMs: number;
  /**
   * Largest upstream answer buffered, in bytes, counted on the received and on the decoded bytes
   * (`UPSTREAM_MAX_RESPONSE_BYTES`; docs/behaviour.md "Upstream answers"); the raw passthrough refuses a
   * declared length over it and cuts a stream that runs over it.
   */
  readonly upstreamMaxResponseBytes: number;
  /**
   * Share of the BFF's 2xx answers checked against the shapes the proxy expects, off the request's
   * path, from 0 (off) to 1 (every answer; `UPSTREAM_CONTRACT_SAMPLE`; docs/behaviour.md "Operations").
   */
  readonly upstreamContractSample: number;
  readonly registerType: RegisterType;
  readonly sessionCookieName: string;
  /** Origins allowed to send state-changing requests; `undefined` = the request's own origin only. */
  readonly allowedOrigins: readonly string[] | undefined;
  readonly buildId: string;
  readonly logLevel: (typeof LOG_LEVELS)[number];
  readonly cachePurgeToken: string | undefined;
  /** node:cluster workers started by `npm start` (1 = no cluster). */
  readonly workers: number;
  /** Time to live of catalogue cache entries, in milliseconds (0 disables the cache). */
  readonly catalogueCacheTtlMs: number;
  /**
   * `CATALOGUE_FOR_SESSIONS`: `shared` answers the catalogue reads from the one shared cache with or
   * without a session (fetched without the user's cookie or token); `forward` forwards a read with a
   * session, uncached (docs/behaviour.md "Which routes need a session").
   */
  readonly catalogueForSessions: CatalogueForSessions;
  /** Prefix for payment icon URLs (spec 2.8); `undefined` = `/icons`. */
  readonly paymentIconPrefix: string | undefined;
  /**
   * The Redis deployment of the state every instance shares (docs/behaviour.md "Several instances"):
   * `REDIS_URL`, `REDIS_SENTINELS` + `REDIS_SENTINEL_NAME` or `REDIS_CLUSTER_NODES` ({@link redisTopology});
   * `undefined`: the state lives in this process and only one process may serve.
   */
  readonly redis: RedisTopology | undefined;
  /**
   * Port of the Prometheus metrics endpoint (`GET /metrics`, same `HOST`; docs/behaviour.md "Operations");
   * never `port` unless both are 0. `undefined`: no metrics endpoint.
   */
  readonly metricsPort?: number;
  /**
   * Port of the health listener (`GET /healthz`, `GET /readyz`, same `HOST`; docs/behaviour.md "Health"),
   * beside the public port, which serves them too; never `port` or `metricsPort` unless 0.
   * `undefined`: no health listener.
   */
  readonly healthPort?: number;
  /** Most client connections the public listener keeps open at once (more are closed at accept); `0`: no bound. */
  readonly maxConnections: number;
  /**
   * `OTEL_EXPORTER_OTLP_ENDPOINT`: base URL of the OTLP/HTTP collector (no trailing slash; spans go to
   * `<url>/v1/traces`); `undefined`: tracing is off and nothing of OpenTelemetry is loaded.
   */
  readonly otlpEndpoint?: string;
  /**
   * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`: the full URL spans are sent to, used as given (the OTLP
   * exporter's rule: it wins over `<otlpEndpoint>/v1/traces`); set alone, it turns tracing on too.
   */
  readonly otlpTracesEndpoint?: string;
  /**
   * The OpenTelemetry variables the proxy's tracing reads itself, as given (the SDK reads the rest of the
   * standard `OTEL_*` variables): the exporter's encoding (`OTEL_EXPORTER_OTLP_TRACES_PROTOCOL`, else
   * `OTEL_EXPORTER_OTLP_PROTOCOL`), the sampler's name (`OTEL_TRACES_SAMPLER`) and the propagators
   * (`OTEL_PROPAGATORS`).
   */
  readonly otlpSettings: Readonly<{
    OTEL_EXPORTER_OTLP_TRACES_PROTOCOL?: string | undefined;
    OTEL_EXPORTER_OTLP_PROTOCOL?: string | undefined;
    OTEL_TRACES_SAMPLER?: string | undefined;
    OTEL_PROPAGATORS?: string | undefined;
  }>;
  /** Idle time of a kept-alive client connection before the server closes it, in milliseconds. */
  readonly keepAliveTimeoutMs: number;
  /** After SIGTERM, time `/readyz` answers 503 while requests are still served, before the listener closes, in milliseconds. */
  readonly shutdownDelayMs: number;
  /** Time in-flight requests get to finish once the listener is closed, in milliseconds; then they are cut. */
  readonly shutdownTimeoutMs: number;
  /** Live streams of the raw passthrough (docs/behaviour.md "Live streams"). */
  readonly streams: {
    /** Longest silence of an upstream stream after its headers, in milliseconds; then it ends between events. */
    readonly idleTimeoutMs: number;
    /** Longest life of one stream, in milliseconds; then it ends between events, so that clients reconnect and rebalance. */
    readonly maxLifetimeMs: number;
    /** Open streams per session. */
    readonly perSession: number;
    /** Open streams per client address (IPv6 per /64). */
    readonly perAddress: number;
    /** Open streams of the process. */
    readonly max: number;
  };
  /**
   * Load balancers whose `X-Forwarded-For` is believed (addresses or CIDR ranges; docs/behaviour.md "Rate
   * limits and client address"); `undefined`: the client address is the socket's.
   */
  readonly trustedProxies: readonly string[] | undefined;
  /** Request limits of docs/behaviour.md "Rate limits and client address"; `0` turns one off. */
  readonly rateLimits: {
    /** Login, register, recovery, social and validate-document requests per client address per minute, together. */
    readonly preAuthPerMin: number;
    /** Failed logins per login identifier and client address per 15 minutes. */
    readonly loginFailures: number;
    /** Failed logins per login identifier over all client addresses per 15 minutes (a distributed guess). */
    readonly loginFailuresPerLogin: number;
    /** Forced-logout beacons per client address per minute. */
    readonly beaconPerMin: number;
    /** Other `/api` requests per session (or client address without one) per minute. */
    readonly apiPerMin: number;
    /** The same requests per client address over all its sessions per minute. */
    readonly apiPerAddressPerMin: number;
  };
  /** The per-endpoint guard of upstream calls (docs/behaviour.md "Resilience"). */
  readonly upstreamLimits: {
    /** Calls of one upstream endpoint (EP code) running at once. */
    readonly maxInFlight: number;
    /** Calls of one endpoint waiting for a slot; `0`: none wait. */
    readonly maxQueue: number;
    /** Longest wait for a slot, in milliseconds. */
    readonly queueWaitMs: number;
    /** Failures in a row that open an endpoint's circuit; `0`: no circuit breaker. */
    readonly circuitFailures: number;
    /** Pause of an open circuit before its trial call, in milliseconds. */
    readonly circuitPauseMs: number;
  };
  /** Load shedding (docs/behaviour.md "Resilience"); `0` turns a threshold off. */
  readonly loadShedding: {
    /** Mean event-loop delay over a sample, in milliseconds, above which new `/api` requests are shed. */
    readonly eventLoopDelayMs: number;
    /** `/api` requests in progress above which new ones are shed. */
    readonly maxInFlight: number;
  };
  /**
   * The BFF's token-signing keys (docs/behaviour.md "Which routes need a session"), one of: the JWKS URL
   * (`JWT_JWKS_URL`), the PEM public key (`JWT_PUBLIC_KEY`), the HMAC secret (`JWT_SECRET`, at least
   * {@link MIN_JWT_SECRET_BYTES} bytes); `undefined`: session tokens are checked for their form only.
   */
  readonly tokenKeys: { readonly jwksUrl?: string; readonly publicKeyPem?: string; readonly secret?: string } | undefined;
}

/** Thrown by {@link loadConfig} with every problem found, one per line, each naming its variable. */
export class ConfigError extends Error {
  readonly problems: readonly string[];
  constructor(problems: string[]) {
    super(`invalid configuration: ${problems.join('; ')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

/** A value as an error line quotes it: JSON-escaped (so the line stays one line), at most 80 characters. */
function quoted(text: string): string {
  return JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}…` : text);
}

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

/** Shortest `JWT_SECRET`, in bytes of UTF-8 (the output size of HS256). */
export const MIN_JWT_SECRET_BYTES = 32;

/**
 * The signature algorithms each kind of key accepts (docs/behaviour.md "Which routes need a session"):
 * RSA → RS256/384/512 and PS256/384/512 (an RSA-PSS key: PS only); EC → the ES algorithm of the
 * key's own curve; Ed25519 → EdDSA (and its fully specified name `Ed25519`, RFC 9864);
 * `JWT_SECRET` → HS256/384/512. Never `none`.
 */
export const KEY_ALGORITHMS = {
  rsa: ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512'],
  'rsa-pss': ['PS256', 'PS384', 'PS512'],
  'ec:P-256': ['ES256'],
  'ec:P-384': ['ES384'],
  'ec:P-521': ['ES512'],
  ed25519: ['EdDSA', 'Ed25519'],
  secret: ['HS256', 'HS384', 'HS512'],
} as const satisfies Record<string, readonly string[]>;

/** A kind of key of {@link KEY_ALGORITHMS}. */
export type TokenKeyKind = keyof typeof KEY_ALGORITHMS;

/** Node's names of the EC curves a token key may use, by their JOSE names. */
const EC_CURVES: Readonly<Record<string, TokenKeyKind>> = {
  prime256v1: 'ec:P-256',
  secp384r1: 'ec:P-384',
  secp521r1: 'ec:P-521',
};

/**
 * The kind of a public key ({@link KEY_ALGORITHMS}), or `undefined` for a key no session token may be
 * signed with (an RSA key under 2,048 bits, an EC key of another curve, Ed448, X25519, DSA…).
 */
export function keyKindOf(key: KeyObject): TokenKeyKind | undefined {
  const type = key.asymmetricKeyType;
  const details = key.asymmetricKeyDetails;
  if (type === 'rsa' || type === 'rsa-pss') return (details?.modulusLength ?? 0) >= 2048 ? type : undefined;
  if (type === 'ec') return EC_CURVES[details?.namedCurve ?? ''];
  if (type === 'ed25519') return 'ed25519';
  return undefined;
}

/** The PS algorithm of each hash an RSA-PSS key may be restricted to, with its salt length in bytes (RFC 7518 §3.5: the hash's size). */
const PSS_HASHES: Readonly<Record<string, { alg: string; saltLength: number }>> = {
  sha256: { alg: 'PS256', saltLength: 32 },
  sha384: { alg: 'PS384', saltLength: 48 },
  sha512: { alg: 'PS512', saltLength: 64 },
};

/** A `JWT_PUBLIC_KEY` read for verification: the key jose is given and the algorithms it accepts. */
export interface TokenPublicKey {
  /** The key: for an RSA-PSS key, the same modulus and exponent as a plain RSA key (what jose can use on every runtime). */
  readonly key: KeyObject;
  /** The algorithms a token signed with it may name ({@link KEY_ALGORITHMS}; one PS algorithm for an RSA-PSS key restricted to one hash). */
  readonly algorithms: readonly string[];
}

/** One element of DER: its tag, where its content starts and where it ends (byte offsets). */
function derElement(der: Buffer, at: number): { tag: number; start: number; end: number } {
  const tag = der[at];
  const first = der[at + 1];
  if (tag === undefined || first === undefined) throw new Error('truncated DER');
  let start = at + 2;
  let length = first;
  if (first & 0x80) {
    const octets = first & 0x7f;
    if (octets === 0 || octets > 4) throw new Error('unsupported DER length');
    length = 0;
    for (let i = 0; i < octets; i++) length = length * 256 + (der[start + i] ?? Number.NaN);
    start += octets;
  }
  const end = start + length;
  if (!Number.isInteger(end) || end > der.length) throw new Error('truncated DER');
  return { tag, start, end };
}

/**
 * An RSA-PSS public key (SPKI with the id-RSASSA-PSS identifier) as a plain RSA key of the same
 * modulus and exponent: jose verifies PS256/384/512 with an RSA key on every runtime, while it cannot
 * use an RSA-PSS `KeyObject` (Node 20 cannot export it as a JWK, Node 24's WebCrypto refuses its
 * identifier). The SPKI's `subjectPublicKey` is the PKCS#1 `RSAPublicKey` either way (RFC 4055 §1.2).
 * @throws Error when the key's encoding is not the one expected, or the result differs from the key.
 */
function pssAsRsa(key: KeyObject): KeyObject {
  const spki = key.export({ type: 'spki', format: 'der' });
  const outer = derElement(spki, 0);
  const algorithm = derElement(spki, outer.start);
  const bits = derElement(spki, algorithm.end);
  if (outer.tag !== 0x30 || outer.end !== spki.length || algorithm.tag !== 0x30 || bits.tag !== 0x03 || bits.end !== outer.end || spki[bits.start] !== 0) {
    throw new Error('not an SPKI structure');
  }
  const rsa = createPublicKey({ key: spki.subarray(bits.start + 1, bits.end), format: 'der', type: 'pkcs1' });
  const [a, b] = [key.asymmetricKeyDetails, rsa.asymmetricKeyDetails];
  if (a?.modulusLength !== b?.modulusLength || a?.publicExponent !== b?.publicExponent) throw new Error('the RSA key read differs');
  return rsa;
}

/** A PEM header of a private key of any kind (PKCS#8, encrypted PKCS#8, PKCS#1 RSA, SEC 1 EC…). */
const PRIVATE_KEY_PEM = /-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----/;

/** Why a private key in `JWT_PUBLIC_KEY` is refused. */
const PRIVATE_KEY_PROBLEM = 'give the public key, not a private key';

/**
 * Reads `JWT_PUBLIC_KEY` (docs/behaviour.md "Which routes need a session"): a PEM public key (SPKI
 * `-----BEGIN PUBLIC KEY-----`, PKCS#1 RSA or an X.509 certificate) of a kind of {@link KEY_ALGORITHMS}.
 * An RSA-PSS key accepts PS256/384/512, or only the PS algorithm of the hash it is restricted to.
 * A private key is refused: Node would derive the public key from it, and the BFF's signing key would
 * sit unnoticed in the proxy's environment.
 * @param text - the PEM, with real line breaks.
 * @returns the key and its algorithms, or `problem`: why the text is refused (one clause of an error line).
 */
export function readTokenPublicKey(text: string): TokenPublicKey | { problem: string } {
  if (PRIVATE_KEY_PEM.test(text)) return { problem: PRIVATE_KEY_PROBLEM };
  let key: KeyObject;
  try {
    key = createPublicKey(text);
  } catch {
    return { problem: 'got text that is not one' };
  }
  if (key.type !== 'public') return { problem: 'got text that is not one' };
  try {
    // A private key under another header (createPublicKey derives a public key from one).
    createPrivateKey(text);
    return { problem: PRIVATE_KEY_PROBLEM };
  } catch {
    // Not a private key: as expected.
  }
  const kind = keyKindOf(key);
  const type = key.asymmetricKeyType;
  const details = key.asymmetricKeyDetails;
  if (kind === undefined) {
    if (type === 'rsa' || type === 'rsa-pss') return { problem: `got an RSA key of ${details?.modulusLength ?? 0} bits` };
    if (type === 'ec') return { problem: `got an EC key on curve ${quoted(details?.namedCurve ?? 'unknown')}` };
    return { problem: `got a ${quoted(type ?? 'unknown')} key` };
  }
  if (kind !== 'rsa-pss') return { key, algorithms: KEY_ALGORITHMS[kind] };
  let algorithms: readonly string[] = KEY_ALGORITHMS['rsa-pss'];
  if (details?.hashAlgorithm !== undefined) {
    const pss = PSS_HASHES[details.hashAlgorithm];
    const mgf1 = details.mgf1HashAlgorithm ?? details.hashAlgorithm;
    if (pss === undefined || mgf1 !== details.hashAlgorithm || (details.saltLength ?? 0) > pss.saltLength) {
      return {
        problem: `got an RSA-PSS key restricted to ${details.hashAlgorithm} with MGF1 ${mgf1} and a salt of ${details.saltLength ?? 0} bytes or more, which no PS256/384/512 signature meets`,
      };
    }
    algorithms = [pss.alg];
  }
  try {
    return { key: pssAsRsa(key), algorithms };
  } catch (error) {
    return { problem: `got an RSA-PSS key that cannot be read as an RSA key (${(error as Error).message})` };
  }
}

/**
 * `JWT_JWKS_URL`, `JWT_PUBLIC_KEY`, `JWT_SECRET`: at most one of them; the URL absolute http(s), the
 * PEM a public key of a kind tokens are signed with, the secret at least {@link MIN_JWT_SECRET_BYTES}
 * bytes (never echoed).
 */
function checkTokenKeys(jwksUrl: string | undefined, pem: string | undefined, secret: string | undefined, problems: string[]): Config['tokenKeys'] {
  const set = (['JWT_JWKS_URL', 'JWT_PUBLIC_KEY', 'JWT_SECRET'] as const).filter((_, i) => [jwksUrl, pem, secret][i] !== undefined);
  if (set.length > 1) {
    problems.push(`${set[1]}: expected one of JWT_JWKS_URL, JWT_PUBLIC_KEY or JWT_SECRET, not several; got ${set.join(' and ')}`);
    return undefined;
  }
  if (jwksUrl !== undefined) {
    let url: URL | undefined;
    try {
      url = new URL(jwksUrl);
    } catch {
      url = undefined;
    }
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.username || url.password) {
      problems.push(`JWT_JWKS_URL: expected an absolute http(s) URL without credentials, got ${quoted(jwksUrl)}`);
      return undefined;
    }
    return Object.freeze({ jwksUrl: url.href });
  }
  if (pem !== undefined) {
    const text = pem.includes('\\n') ? pem.replaceAll('\\n', '\n') : pem;
    const read = readTokenPublicKey(text);
    if (!('problem' in read)) return Object.freeze({ publicKeyPem: text });
    if (read.problem === PRIVATE_KEY_PROBLEM) {
      problems.push(`JWT_PUBLIC_KEY: ${read.problem} (the proxy only verifies tokens; keep the BFF's signing key out of its environment)`);
    } else {
      problems.push(`JWT_PUBLIC_KEY: expected an RSA or RSA-PSS (2048 bits or more), EC P-256/P-384/P-521 or Ed25519 public key in PEM (-----BEGIN PUBLIC KEY-----…), ${read.problem}`);
    }
    return undefined;
  }
  if (secret !== undefined) {
    const bytes = Buffer.byteLength(secret, 'utf8');
    if (bytes >= MIN_JWT_SECRET_BYTES) return Object.freeze({ secret });
    problems.push(`JWT_SECRET: expected at least ${MIN_JWT_SECRET_BYTES} bytes (the HMAC secret of an HS256/384/512 BFF), got ${bytes} bytes`);
  }
  return undefined;
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

/*
 * Which Redis deployment the shared state uses (docs/behaviour.md "Configuration" and "Several instances"),
 * read from the environment at start: exactly one of
 *
 * | variables | topology | ioredis client |
 * |---|---|---|
 * | `REDIS_URL` | one server, or a managed primary endpoint (`redis://` or `rediss://`, password in the URL) | `new Redis(url)` |
 * | `REDIS_SENTINELS` + `REDIS_SENTINEL_NAME` | Sentinel: the sentinels name the primary, and a new one after a failover | `new Redis({ sentinels, name })` |
 * | `REDIS_CLUSTER_NODES` | cluster mode: seed nodes, the others are discovered | `new Cluster(nodes)` |
 *
 * With Sentinel or a cluster, `REDIS_PASSWORD` is the servers' password, `REDIS_SENTINEL_PASSWORD`
 * the sentinels' and `REDIS_TLS=true` turns TLS on towards both (with `REDIS_URL` the URL says all
 * of it: `rediss://:password@host:port`). `REDIS_MIN_REPLICAS_ACK` says which replicas must
 * acknowledge a money move's records before it goes upstream (docs/behaviour.md "Several
 * instances"): `auto` (the default with Sentinel or a cluster) every replica that could be promoted,
 * a number a floor under that (with `REDIS_URL`, where no replica is known to be promotable, the
 * number alone; default 0); never what the primary reports at the moment. Any other combination
 * stops the start with one line naming the variables.
 */

/** A server address from `REDIS_SENTINELS` or `REDIS_CLUSTER_NODES`. */
export interface RedisAddress {
  readonly host: string;
  readonly port: number;
}

/** The Redis deployment of the shared state (see the module documentation). */
export type RedisTopology = (
  | { readonly mode: 'standalone'; readonly url: string }
  | {
      readonly mode: 'sentinel';
      readonly sentinels: readonly RedisAddress[];
      /** The primary's name as the sentinels monitor it (`REDIS_SENTINEL_NAME`). */
      readonly name: string;
      readonly password: string | undefined;
      readonly sentinelPassword: string | undefined;
      readonly tls: boolean;
    }
  | { readonly mode: 'cluster'; readonly nodes: readonly RedisAddress[]; readonly password: string | undefined; readonly tls: boolean }
) & {
  /**
   * Which replicas must acknowledge (`WAIT`) a money move's records before it goes upstream
   * (`REDIS_MIN_REPLICAS_ACK`): `auto`, every replica that could be promoted (Sentinel or cluster
   * only); a number, a floor under that (with `REDIS_URL`: that many replicas; `0`: none is asked).
   */
  readonly minReplicasAck: number | 'auto';
};

/** The variables {@link redisTopology} reads. */
export interface RedisVariables {
  readonly REDIS_URL?: string | undefined;
  readonly REDIS_SENTINELS?: string | undefined;
  readonly REDIS_SENTINEL_NAME?: string | undefined;
  readonly REDIS_CLUSTER_NODES?: string | undefined;
  readonly REDIS_PASSWORD?: string | undefined;
  readonly REDIS_SENTINEL_PASSWORD?: string | undefined;
  readonly REDIS_TLS?: string | undefined;
  /** As text (the environment) or as the schema read it. */
  readonly REDIS_MIN_REPLICAS_ACK?: string | number | undefined;
}

/** The default port of a sentinel when an address leaves it out. */
export const SENTINEL_DEFAULT_PORT = 26379;
/** The default port of a Redis server when an address leaves it out. */
export const REDIS_DEFAULT_PORT = 6379;

function checkRedisUrl(value: string, problems: string[]): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    problems.push('REDIS_URL: expected a redis:// or rediss:// URL, such as redis://:password@redis.internal:6379/0');
    return undefined;
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') {
    problems.push(`REDIS_URL: expected a redis:// or rediss:// URL, got protocol "${url.protocol}"`);
    return undefined;
  }
  if (!url.hostname) {
    problems.push('REDIS_URL: expected a host, such as redis://redis.internal:6379');
    return undefined;
  }
  return value;
}

/**
 * `REDIS_MIN_REPLICAS_ACK` (`auto`, or a plain decimal integer 0–{@link MAX_REPLICAS_ACK}), or
 * `undefined` when unset; a bad value is one problem line.
 */
function checkReplicasAck(value: string | number | undefined, problems: string[]): number | 'auto' | undefined {
  if (value === undefined || value === '') return undefined;
  if (value === 'auto') return 'auto';
  const number = typeof value === 'number' ? value : PLAIN_INTEGER.test(value) ? Number(value) : Number.NaN;
  if (Number.isSafeInteger(number) && number >= 0 && number <= MAX_REPLICAS_ACK) return number;
  problems.push(`REDIS_MIN_REPLICAS_ACK: expected auto or a plain decimal integer from 0 to ${MAX_REPLICAS_ACK}, got ${quoted(String(value))}`);
  return undefined;
}

/** Parses `host:port,…` (a bracketed IPv6 host is allowed; a missing port is `defaultPort`). */
function checkAddresses(name: string, value: string, defaultPort: number, example: string, problems: string[]): RedisAddress[] | undefined {
  const items = value.split(',').map((item) => item.trim());
  const addresses: RedisAddress[] = [];
  for (const item of items) {
    let url: URL | undefined;
    try {
      url = new URL(`redis://${item}`);
    } catch {
      url = undefined;
    }
    const plain = url !== undefined && url.host.toLowerCase() === item.toLowerCase() && url.username === '' && url.password === '';
    if (item === '' || url === undefined || !plain || url.hostname === '') {
      // An address with credentials is never echoed: they go in REDIS_PASSWORD and REDIS_SENTINEL_PASSWORD.
      const got = item.includes('@') ? 'an address with credentials (REDIS_PASSWORD and REDIS_SENTINEL_PASSWORD hold them)' : `"${item.slice(0, 80)}"`;
      problems.push(`${name}: expected comma-separated host:port addresses, such as ${example}, got ${got}`);
      return undefined;
    }
    addresses.push({ host: url.hostname.replace(/^\[(.*)\]$/, '$1'), port: url.port === '' ? defaultPort : Number(url.port) });
  }
  return addresses;
}

/**
 * The topology the variables name, or `undefined` when none is set (the state then lives in process
 * memory).
 *
 * @param problems - receives one line per problem, naming the variables (the start then stops).
 */
export function redisTopology(env: RedisVariables, problems: string[]): RedisTopology | undefined {
  const chosen = (['REDIS_URL', 'REDIS_SENTINELS', 'REDIS_CLUSTER_NODES'] as const).filter((name) => env[name] !== undefined);
  if (chosen.length > 1) {
    problems.push(`REDIS_URL, REDIS_SENTINELS, REDIS_CLUSTER_NODES: expected exactly one of them, got ${chosen.join(' and ')}`);
    return undefined;
  }
  const mode = chosen[0];
  const before = problems.length;
  if (env.REDIS_SENTINEL_NAME !== undefined && mode !== 'REDIS_SENTINELS') {
    problems.push('REDIS_SENTINEL_NAME: needs REDIS_SENTINELS (the sentinels that know the primary by this name)');
  }
  if (mode === 'REDIS_SENTINELS' && (env.REDIS_SENTINEL_NAME === undefined || env.REDIS_SENTINEL_NAME.trim() === '')) {
    problems.push("REDIS_SENTINELS, REDIS_SENTINEL_NAME: expected REDIS_SENTINEL_NAME too, the primary's name as the sentinels monitor it (such as mymaster)");
  }
  if (env.REDIS_SENTINEL_PASSWORD !== undefined && mode !== 'REDIS_SENTINELS') {
    problems.push('REDIS_SENTINEL_PASSWORD: needs REDIS_SENTINELS');
  }
  for (const name of ['REDIS_PASSWORD', 'REDIS_TLS'] as const) {
    if (env[name] !== undefined && mode !== 'REDIS_SENTINELS' && mode !== 'REDIS_CLUSTER_NODES') {
      problems.push(`${name}: needs REDIS_SENTINELS or REDIS_CLUSTER_NODES (with REDIS_URL, the URL holds the password and rediss:// turns TLS on)`);
    }
  }
  if (env.REDIS_TLS !== undefined && env.REDIS_TLS !== 'true' && env.REDIS_TLS !== 'false') {
    problems.push(`REDIS_TLS: expected one of true, false, got "${env.REDIS_TLS.slice(0, 20)}"`);
  }
  const tls = env.REDIS_TLS === 'true';
  const password = env.REDIS_PASSWORD === '' ? undefined : env.REDIS_PASSWORD;
  const replicasAck = checkReplicasAck(env.REDIS_MIN_REPLICAS_ACK, problems);
  if (replicasAck !== undefined && mode === undefined) {
    problems.push('REDIS_MIN_REPLICAS_ACK: needs REDIS_URL, REDIS_SENTINELS or REDIS_CLUSTER_NODES (without Redis, money moves are recorded in process memory)');
  }
  switch (mode) {
    case undefined:
      return undefined;
    case 'REDIS_URL': {
      const url = checkRedisUrl(env.REDIS_URL as string, problems);
      if (replicasAck === 'auto') {
        problems.push(
          'REDIS_MIN_REPLICAS_ACK: auto needs REDIS_SENTINELS or REDIS_CLUSTER_NODES (with REDIS_URL no replica is known to be promotable: give the number of replicas that must acknowledge)',
        );
      }
      return url === undefined || problems.length > before ? undefined : { mode: 'standalone', url, minReplicasAck: (replicasAck as number | undefined) ?? 0 };
    }
    case 'REDIS_SENTINELS': {
      const sentinels = checkAddresses('REDIS_SENTINELS', env.REDIS_SENTINELS as string, SENTINEL_DEFAULT_PORT, 'redis-sentinel-0.redis:26379,redis-sentinel-1.redis:26379', problems);
      if (sentinels === undefined || problems.length > before) return undefined;
      const sentinelPassword = env.REDIS_SENTINEL_PASSWORD === '' ? undefined : env.REDIS_SENTINEL_PASSWORD;
      return { mode: 'sentinel', sentinels, name: (env.REDIS_SENTINEL_NAME as string).trim(), password, sentinelPassword, tls, minReplicasAck: replicasAck ?? 'auto' };
    }
    case 'REDIS_CLUSTER_NODES': {
      const nodes = checkAddresses('REDIS_CLUSTER_NODES', env.REDIS_CLUSTER_NODES as string, REDIS_DEFAULT_PORT, 'redis-0.redis:6379,redis-1.redis:6379', problems);
      return nodes === undefined || problems.length > before ? undefined : { mode: 'cluster', nodes, password, tls, minReplicasAck: replicasAck ?? 'auto' };
    }
  }
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

/** A plain decimal integer: digits only, no sign, exponent, space, prefix or leading zero. */
const PLAIN_INTEGER = /^(0|[1-9][0-9]*)$/;
/** A plain decimal number: an integer part, optionally a point and up to 9 digits (`0.01`, `1`, `0.5`; no `1e-2`, `.5`). */
const PLAIN_DECIMAL = /^(0|[1-9][0-9]*)(\.[0-9]{1,9})?$/;

/** A host name: dot-separated labels of letters, digits, `-` and `_`, at most 253 characters. */
const HOST_NAME = /^(?=.{1,253}$)[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?(?:\.[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?)*\.?$/;

/**
 * Whether `value` can name a listen address: an IPv4 or IPv6 literal, or a host name whose last label
 * is not all digits (`999.1.1.1` is a malformed address, not a name).
 */
function isListenHost(value: string): boolean {
  if (isIP(value) !== 0) return true;
  if (!HOST_NAME.test(value)) return false;
  const last = value.replace(/\.$/, '').split('.').pop() ?? '';
  return !/^[0-9]+$/.test(last);
}

/** The values of an enumeration schema (a union of literals), else `undefined`. */
function literalsOf(schema: TSchema): string[] | undefined {
  if (schema[Kind] !== 'Union') return undefined;
  return (schema.anyOf as TSchema[]).map((member) => String(member.const));
}

/** What an error line says a variable expects. */
function expectation(schema: TSchema): string {
  if (schema[Kind] === 'Integer') {
    return `a plain decimal integer from ${String(schema.minimum)} to ${String(schema.maximum)}`;
  }
  if (schema[Kind] === 'Number') {
    return `a plain decimal number from ${String(schema.minimum)} to ${String(schema.maximum)}`;
  }
  const literals = literalsOf(schema);
  if (literals) return `one of ${literals.join(' | ')}`;
  return typeof schema.description === 'string' ? schema.description : 'a text value';
}

/**
 * Converts and checks one variable's raw text against its schema: the value, or the error line
 * (`NAME: expected …, got "…"`; a secret is described by its length, never echoed).
 */
function readVariable(name: string, schema: TSchema, text: string): { value: unknown } | { problem: string } {
  const got = schema.secret === true ? `got ${text.length} characters` : `got ${quoted(text)}`;
  const refused = { problem: `${name}: expected ${expectation(schema)}, ${got}` };
  if (schema[Kind] === 'Integer') {
    if (!PLAIN_INTEGER.test(text)) return refused;
    const value = Number(text);
    return Value.Check(schema, value) ? { value } : refused;
  }
  if (schema[Kind] === 'Number') {
    if (!PLAIN_DECIMAL.test(text)) return refused;
    const value = Number(text);
    return Value.Check(schema, value) ? { value } : refused;
  }
  if (!Value.Check(schema, text)) return refused;
  if (name === 'HOST' && !isListenHost(text)) return refused;
  return { value: text };
}

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
        problems.push(`${name}: expected ${whose} absolute http(s) URL, required with NODE_ENV=production (the sandbox never starts in production)`);
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
  const otlpEndpoint = e.OTEL_EXPORTER_OTLP_ENDPOINT === undefined ? undefined : checkUrl('OTEL_EXPORTER_OTLP_ENDPOINT', e.OTEL_EXPORTER_OTLP_ENDPOINT, problems);
  const otlpTracesEndpoint =
    e.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT === undefined ? undefined : checkUrl('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', e.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, problems);
  if (e.WORKERS > 1 && e.REDIS_URL === undefined && e.REDIS_SENTINELS === undefined && e.REDIS_CLUSTER_NODES === undefined) {
    problems.push(
      `WORKERS: ${e.WORKERS} processes need REDIS_URL (or REDIS_SENTINELS, REDIS_CLUSTER_NODES), so that they share the money moves' records and the caches (docs/behaviour.md "Several instances"); set REDIS_URL or WORKERS=1`,
    );
  }
  if (e.METRICS_PORT !== undefined && !invalid.has('PORT') && e.PORT !== 0 && e.METRICS_PORT === e.PORT) {
    problems.push(`METRICS_PORT: expected a port other than PORT (${e.PORT}): metrics are never served on the public port, got ${quoted(String(e.METRICS_PORT))}`);
  }
  if (e.HEALTH_PORT !== undefined && e.HEALTH_PORT !== 0) {
    for (const [name, other] of [['PORT', e.PORT], ['METRICS_PORT', e.METRICS_PORT]] as const) {
      if (!invalid.has(name) && other === e.HEALTH_PORT) {
        problems.push(`HEALTH_PORT: expected a port other than ${name} (${other}), got ${quoted(String(e.HEALTH_PORT))}`);
      }
    }
  }
  const sessionCookieName = e.SESSION_COOKIE_NAME ?? (production ? '__Host-access_token' : 'access_token');
  const tokenKeys = checkTokenKeys(e.JWT_JWKS_URL, e.JWT_PUBLIC_KEY, e.JWT_SECRET, problems);
  if (problems.length > 0) throw new ConfigError(problems);

  return Object.freeze({
    port: e.PORT,
    host: e.HOST,
    nodeEnv: e.NODE_ENV,
    production,
    upstreams: Object.freeze(upstreams),
    useSandbox: upstreams.BFF_BASE_URL === undefined,
    upstreamTimeoutMs: e.UPSTREAM_TIMEOUT_MS,
    upstreamMaxResponseBytes: e.UPSTREAM_MAX_RESPONSE_BYTES,
    upstreamContractSample: e.UPSTREAM_CONTRACT_SAMPLE,
    registerType: e.REGISTER_TYPE as RegisterType,
    sessionCookieName,
    allowedOrigins: allowedOrigins === undefined ? undefined : Object.freeze(allowedOrigins),
    buildId: e.BUILD_ID ?? PACKAGE_VERSION,
    logLevel: e.LOG_LEVEL as Config['logLevel'],
    cachePurgeToken: e.CACHE_PURGE_TOKEN,
    workers: e.WORKERS,
    catalogueCacheTtlMs: e.CATALOGUE_CACHE_TTL_MS,
    catalogueForSessions: e.CATALOGUE_FOR_SESSIONS as CatalogueForSessions,
    paymentIconPrefix: e.PAYMENT_ICON_PREFIX?.replace(/\/+$/, ''),
    redis,
    ...(e.METRICS_PORT === undefined ? {} : { metricsPort: e.METRICS_PORT }),
    ...(e.HEALTH_PORT === undefined ? {} : { healthPort: e.HEALTH_PORT }),
    maxConnections: e.MAX_CONNECTIONS,
    ...(otlpEndpoint === undefined ? {} : { otlpEndpoint }),
    ...(otlpTracesEndpoint === undefined ? {} : { otlpTracesEndpoint }),
    otlpSettings: Object.freeze({
      OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: e.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL,
      OTEL_EXPORTER_OTLP_PROTOCOL: e.OTEL_EXPORTER_OTLP_PROTOCOL,
      OTEL_TRACES_SAMPLER: e.OTEL_TRACES_SAMPLER,
      OTEL_PROPAGATORS: e.OTEL_PROPAGATORS,
    }),
    keepAliveTimeoutMs: e.KEEP_ALIVE_TIMEOUT_MS,
    shutdownDelayMs: e.SHUTDOWN_DELAY_MS,
    shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_MS,
    streams: Object.freeze({
      idleTimeoutMs: e.STREAM_IDLE_TIMEOUT_MS,
      maxLifetimeMs: e.STREAM_MAX_LIFETIME_MS,
      perSession: e.STREAMS_PER_SESSION,
      perAddress: e.STREAMS_PER_ADDRESS,
      max: e.STREAMS_MAX,
    }),
    trustedProxies: trustedProxies === undefined ? undefined : Object.freeze(trustedProxies),
    rateLimits: Object.freeze({
      preAuthPerMin: e.RATE_LIMIT_PREAUTH_PER_MIN,
      loginFailures: e.RATE_LIMIT_LOGIN_FAILURES,
      loginFailuresPerLogin: e.RATE_LIMIT_LOGIN_FAILURES_PER_LOGIN,
      beaconPerMin: e.RATE_LIMIT_BEACON_PER_MIN,
      apiPerMin: e.RATE_LIMIT_API_PER_MIN,
      apiPerAddressPerMin: e.RATE_LIMIT_API_PER_ADDRESS_PER_MIN,
    }),
    upstreamLimits: Object.freeze({
      maxInFlight: e.UPSTREAM_ENDPOINT_MAX_IN_FLIGHT,
      maxQueue: e.UPSTREAM_ENDPOINT_QUEUE,
      queueWaitMs: e.UPSTREAM_QUEUE_WAIT_MS,
      circuitFailures: e.UPSTREAM_CIRCUIT_FAILURES,
      circuitPauseMs: e.UPSTREAM_CIRCUIT_PAUSE_MS,
    }),
    loadShedding: Object.freeze({
      eventLoopDelayMs: e.LOAD_SHED_EVENT_LOOP_DELAY_MS,
      maxInFlight: e.LOAD_SHED_MAX_IN_FLIGHT,
    }),
    tokenKeys,
  });
}

/**
 * Whether this machine can listen on `host` (docs/behaviour.md "Configuration": `HOST` must be an address
 * this machine can bind): binds a throwaway server to `host` on a free port, then closes it. A host
 * name is resolved first, as `listen` does. Called by the process entry point before the app is built;
 * {@link loadConfig} stays synchronous and only checks the form of `HOST`.
 *
 * @param host - the listen address, as {@link Config.host} holds it.
 * @returns `undefined` when the bind succeeds, else the one error line
 *   `HOST: cannot bind "<host>": <reason>`. Never rejects.
 */
export function checkHostBindable(host: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    const probe = createNetServer();
    probe.once('error', (error: Error) => resolve(`HOST: cannot bind ${quoted(host)}: ${error.message}`));
    probe.listen({ port: 0, host, exclusive: true }, () => probe.close(() => resolve(undefined)));
  });
}

/** The package version, the default `BUILD_ID`. Kept in step with package.json by a test. */
export const PACKAGE_VERSION = '0.1.0';

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
