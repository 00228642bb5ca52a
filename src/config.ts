/**
 * Configuration of the proxy: one schema for every environment variable of CONTRACT.md
 * ("Configuration"), validated at start with every problem reported at once, then frozen.
 *
 * @module
 */
import { type Static, Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';

/** The `REGISTER_TYPE` values of CONTRACT.md and the upstream each selects (spec 4.1). */
export const REGISTER_TYPES = ['bff-simplified', 'classic', 'simplified'] as const;
export type RegisterType = (typeof REGISTER_TYPES)[number];

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** Environment variables as they arrive (strings), before conversion; also the source of the README's configuration table (`npm run docs:config`). */
export const EnvSchema = Type.Object({
  PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 3000 }),
  HOST: Type.String({ minLength: 1, default: '127.0.0.1' }),
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
  UPSTREAM_TIMEOUT_MS: Type.Integer({ minimum: 1, maximum: 600_000, default: 15_000 }),
  REGISTER_TYPE: Type.Union(
    REGISTER_TYPES.map((t) => Type.Literal(t)),
    { default: 'bff-simplified' },
  ),
  SESSION_COOKIE_NAME: Type.Optional(Type.String({ pattern: "^[!#$%&'*+\\-.^_`|~0-9A-Za-z]{1,64}$" })),
  ALLOWED_ORIGINS: Type.Optional(Type.String()),
  BUILD_ID: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
  LOG_LEVEL: Type.Union(
    LOG_LEVELS.map((l) => Type.Literal(l)),
    { default: 'info' },
  ),
  CACHE_PURGE_TOKEN: Type.Optional(Type.String({ minLength: 16 })),
  WORKERS: Type.Integer({ minimum: 1, maximum: 64, default: 1 }),
  CATALOGUE_CACHE_TTL_MS: Type.Integer({ minimum: 0, maximum: 86_400_000, default: 60_000 }),
  PAYMENT_ICON_PREFIX: Type.Optional(Type.String({ minLength: 1 })),
  REDIS_URL: Type.Optional(Type.String()),
});

/** The upstream URLs of CONTRACT.md, by variable name. */
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
  /** Prefix for payment icon URLs (spec 2.8); `undefined` = `/icons`. */
  readonly paymentIconPrefix: string | undefined;
  /**
   * `redis://` or `rediss://` URL of the state every instance shares (CONTRACT.md "Several instances");
   * `undefined`: the state lives in this process and only one process may serve.
   */
  readonly redisUrl: string | undefined;
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

function checkUrl(name: string, value: string, problems: string[]): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    problems.push(`${name}: expected an absolute http(s) URL, got "${value}"`);
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    problems.push(`${name}: expected an http or https URL, got protocol "${url.protocol}"`);
    return undefined;
  }
  if (url.search || url.hash || url.username || url.password) {
    problems.push(`${name}: expected a URL without query, fragment or credentials`);
    return undefined;
  }
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

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

function checkOrigin(value: string, problems: string[]): string | undefined {
  try {
    const url = new URL(value);
    if ((url.protocol === 'http:' || url.protocol === 'https:') && url.origin === value.replace(/\/$/, '')) {
      return url.origin;
    }
  } catch {
    // reported below
  }
  problems.push(`ALLOWED_ORIGINS: expected comma-separated origins such as https://www.example.com, got "${value}"`);
  return undefined;
}

/**
 * Reads and validates the configuration of CONTRACT.md from an environment.
 *
 * @param env - the variables (usually `process.env`); unknown variables are ignored.
 * @returns the frozen {@link Config}.
 * @throws {@link ConfigError} listing every invalid variable at once.
 * @example
 * const config = loadConfig({ PORT: '0', BFF_BASE_URL: 'https://bff.example.com/api' });
 */
export function loadConfig(env: Record<string, string | undefined> = {}): Config {
  const raw: Record<string, unknown> = {};
  for (const key of Object.keys(EnvSchema.properties)) {
    const value = env[key];
    if (value !== undefined && value !== '') raw[key] = value;
  }
  const converted = Value.Default(EnvSchema, Value.Convert(EnvSchema, raw));
  const problems: string[] = [];
  for (const error of Value.Errors(EnvSchema, converted)) {
    const name = error.path.replace(/^\//, '');
    problems.push(`${name}: ${error.message.toLowerCase()}, got "${String(env[name])}"`);
  }
  if (problems.length > 0) throw new ConfigError(problems);
  const e = converted as Static<typeof EnvSchema>;

  const upstreams = {} as Record<UpstreamUrlVariable, string | undefined>;
  for (const name of UPSTREAM_URL_VARIABLES) {
    const value = e[name];
    upstreams[name] = value === undefined ? undefined : checkUrl(name, value, problems);
  }
  const allowedOrigins =
    e.ALLOWED_ORIGINS === undefined
      ? undefined
      : e.ALLOWED_ORIGINS.split(',')
          .map((o) => o.trim())
          .filter((o) => o.length > 0)
          .map((o) => checkOrigin(o, problems))
          .filter((o): o is string => o !== undefined);
  const redisUrl = e.REDIS_URL === undefined ? undefined : checkRedisUrl(e.REDIS_URL, problems);
  if (e.WORKERS > 1 && e.REDIS_URL === undefined) {
    problems.push(`WORKERS: ${e.WORKERS} processes need REDIS_URL, so that they share the money moves' records and the caches (CONTRACT.md "Several instances"); set REDIS_URL or WORKERS=1`);
  }
  const production = e.NODE_ENV === 'production';
  const sessionCookieName = e.SESSION_COOKIE_NAME ?? (production ? '__Host-access_token' : 'access_token');
  if (problems.length > 0) throw new ConfigError(problems);

  return Object.freeze({
    port: e.PORT,
    host: e.HOST,
    nodeEnv: e.NODE_ENV,
    production,
    upstreams: Object.freeze(upstreams),
    useSandbox: upstreams.BFF_BASE_URL === undefined,
    upstreamTimeoutMs: e.UPSTREAM_TIMEOUT_MS,
    registerType: e.REGISTER_TYPE as RegisterType,
    sessionCookieName,
    allowedOrigins: allowedOrigins === undefined ? undefined : Object.freeze(allowedOrigins),
    buildId: e.BUILD_ID ?? PACKAGE_VERSION,
    logLevel: e.LOG_LEVEL as Config['logLevel'],
    cachePurgeToken: e.CACHE_PURGE_TOKEN,
    workers: e.WORKERS,
    catalogueCacheTtlMs: e.CATALOGUE_CACHE_TTL_MS,
    paymentIconPrefix: e.PAYMENT_ICON_PREFIX?.replace(/\/+$/, ''),
    redisUrl,
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
