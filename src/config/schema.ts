/**
 * The schema of every environment variable of docs/behaviour.md "Configuration", and how one variable's
 * text is read against it. The source of the configuration reference (`npm run docs:config`) and of the
 * {@link Env} type the configuration is built from.
 *
 * @module
 */
import { isIP } from 'node:net';
import { type Static, type TSchema, Kind, Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { quoted } from './problems.js';

/** The `REGISTER_TYPE` values of docs/behaviour.md "Configuration" and the upstream each selects (spec 4.1). */
export const REGISTER_TYPES = ['bff-simplified', 'classic', 'simplified'] as const;
export type RegisterType = (typeof REGISTER_TYPES)[number];

/** The `CATALOGUE_FOR_SESSIONS` values of docs/behaviour.md "Configuration": how a catalogue read with a session is answered (spec 4.6). */
export const CATALOGUE_FOR_SESSIONS_MODES = ['shared', 'forward'] as const;
export type CatalogueForSessions = (typeof CATALOGUE_FOR_SESSIONS_MODES)[number];

/** The `LOG_LEVEL` values (pino's levels). */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** Longest time a millisecond setting accepts (10 minutes). */
const MAX_MS = 600_000;

/** Largest `REDIS_MIN_REPLICAS_ACK`: replicas that must acknowledge a money move's records. */
export const MAX_REPLICAS_ACK = 16;

/**
 * Environment variables as they arrive (strings), before conversion. An integer is checked by its
 * bounds, an enumeration by its literals; every other variable says what it expects in `description`
 * (the error line quotes it). `secret` variables are never echoed in an error line. Also the source of
 * docs/configuration.md (`npm run docs:config`).
 */
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
  TRUSTED_PROXIES: Type.Optional(
    Type.String({ description: 'comma-separated IP addresses or CIDR ranges, such as 10.0.0.0/8,192.168.1.7' }),
  ),
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
  JWT_PUBLIC_KEY: Type.Optional(
    Type.String({
      minLength: 1,
      description: "the BFF's token-signing public key in PEM, never its private key (literal \\n accepted as line breaks)",
    }),
  ),
  JWT_SECRET: Type.Optional(Type.String({ description: 'at least 32 bytes: the HMAC secret of an HS256/384/512 BFF', secret: true })),
});

/** The variables as {@link EnvSchema} reads them: numbers converted, defaults filled. */
export type Env = Static<typeof EnvSchema>;

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

/** A plain decimal integer: digits only, no sign, exponent, space, prefix or leading zero. */
export const PLAIN_INTEGER = /^(0|[1-9][0-9]*)$/;
/** A plain decimal number: an integer part, optionally a point and up to 9 digits (`0.01`, `1`, `0.5`; no `1e-2`, `.5`). */
const PLAIN_DECIMAL = /^(0|[1-9][0-9]*)(\.[0-9]{1,9})?$/;

/** A host name: dot-separated labels of letters, digits, `-` and `_`, at most 253 characters. */
const HOST_NAME =
  /^(?=.{1,253}$)[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?(?:\.[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?)*\.?$/;

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
export function readVariable(name: string, schema: TSchema, text: string): { value: unknown } | { problem: string } {
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
