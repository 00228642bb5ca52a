/**
 * The embedded sandbox (package subpath `./sandbox`, docs/behaviour.md "Public modules"): a real HTTP
 * implementation of every upstream the proxy calls, in memory and seeded, on three loopback
 * servers: the BFF, the sticker-album API and the external services.
 *
 * @example
 * ```ts
 * import { startSandbox } from 'front-proxy/sandbox';
 * const sandbox = await startSandbox();           // any free ports
 * const app = createServer({ ...config, bffBaseUrl: sandbox.bffUrl, ... });
 * // … tests …
 * await sandbox.close();
 * ```
 *
 * Demo logins: see {@link DEMO_LOGINS}. Admin and fault-injection API: `admin.ts` and `README.md`.
 *
 * @module
 */
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { bffAreas } from './bff/index.js';
import { issueToken } from './bff/session.js';
import type { SandboxArea, SandboxContext, SandboxServerUrls } from './context.js';
import { EXTERNAL_PATHS, externalAreas } from './external/index.js';
import type { FaultLimits } from './faults.js';
import { DEMO_LOGINS, type SandboxSeedOptions } from './seed.js';
import { createSandboxServer } from './server.js';
import { stickerAreas } from './sticker/index.js';
import { SandboxStore } from './store.js';
import { SandboxTokens } from './tokens.js';
import type { SandboxServerName } from './traffic.js';

/** Options of {@link startSandbox}; every field is optional. */
export interface StartSandboxOptions {
  /** Listen address of the three servers. Default `127.0.0.1`. */
  host?: string;
  /**
   * Base port: the BFF listens on `port`, the sticker API on `port + 1`, the external services on
   * `port + 2`. Default 0 (each server on any free port).
   */
  port?: number;
  /** Port of each server, overriding `port`. */
  ports?: { bff?: number; sticker?: number; external?: number };
  /** `true` for a pino logger at level info, or a pino-compatible logger. Default off. */
  logger?: boolean | FastifyBaseLogger;
  /** Log each request too (needs `logger`). Default false. */
  requestLogging?: boolean;
  /** Extra seeded users, or users instead of the demo ones. */
  seed?: SandboxSeedOptions;
  /** Clock in epoch milliseconds (token `iat`/`exp`, session and code expiry). Default `Date.now`. */
  now?: () => number;
  /** Lifetime of a session JWT, in seconds (`expires_in`). Default 25 200 (7 h: the 6 h refresh cycle plus margin). */
  tokenTtlSeconds?: number;
  /** How long a token replaced by a refresh keeps working, in seconds. Default 60. */
  refreshGraceSeconds?: number;
  /** Lifetime of a password-recovery code, in seconds. Default 900. */
  recoveryCodeTtlSeconds?: number;
  /** Extra areas registered after the built-in ones of each server (tests, experiments). */
  areas?: Partial<Record<SandboxServerName, readonly SandboxArea[]>>;
  /**
   * Bounds of the fault rules (`POST /__sandbox/faults`) of each server: rules, longest delay (ms),
   * requests held at once, rule body size. Default `DEFAULT_FAULT_LIMITS` (50, 120 000 ms, 1000, 65 536).
   */
  faultLimits?: Partial<FaultLimits>;
}

/** The configuration variables of docs/behaviour.md "Configuration" that point at the sandbox. */
export interface SandboxEnv {
  BFF_BASE_URL: string;
  STICKER_API_URL: string;
  REFERRAL_V1_API_URL: string;
  REFERRAL_V2_API_URL: string;
  FTD_CASHBACK_VERIFY_URL: string;
  FTD_CASHBACK_SEND_URL: string;
  ATTRIBUTION_S2S_URL: string;
  CACHE_PURGE_URL: string;
}

/** A running sandbox. URLs have no trailing slash. */
export interface SandboxHandle {
  /** `{bff_base_url}`. */
  readonly bffUrl: string;
  /** `{sticker_api_url}`. */
  readonly stickerApiUrl: string;
  /** Referral service v1 (`<external>/referral-v1`). */
  readonly referralV1ApiUrl: string;
  /** Referral service v2 (`<external>/referral-v2`). */
  readonly referralV2ApiUrl: string;
  /** Full URL of the cashback verifier (`<external>/ftd-cashback/verify`). */
  readonly ftdCashbackVerifyUrl: string;
  /** Full URL of the cashback sender (`<external>/ftd-cashback/send`). */
  readonly ftdCashbackSendUrl: string;
  /** Full URL of the attribution provider (`<external>/attribution/s2s`). */
  readonly attributionS2sUrl: string;
  /** Full URL of the worker-cache purge endpoint (`<external>/cache/purge`). */
  readonly cachePurgeUrl: string;
  /** Origin of the external services server. */
  readonly externalUrl: string;
  /** The same URLs under the names of their configuration variables (docs/behaviour.md "Configuration"). */
  readonly env: Readonly<SandboxEnv>;
  /** The live state: users, sessions, codes, registrations, traffic per server, area state. */
  readonly store: SandboxStore;
  /** The Fastify instances, for `inject()` in tests. */
  readonly servers: Readonly<Record<SandboxServerName, FastifyInstance>>;
  /** A fresh access token for a user (e-mail or document), skipping the login flow. */
  tokenFor(login: string): Promise<string>;
  /** Stops the three servers (open connections are cut, requests held by fault rules too). Safe to call twice. */
  close(): Promise<void>;
}

function urlHost(host: string): string {
  if (host === '0.0.0.0' || host === '') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return host.includes(':') ? `[${host}]` : host;
}

function portOf(app: FastifyInstance): number {
  const address = app.server.address();
  if (address === null || typeof address === 'string') throw new Error('sandbox server has no TCP address');
  return address.port;
}

/**
 * Starts the sandbox: three Fastify servers sharing one seeded {@link SandboxStore}.
 *
 * @param options see {@link StartSandboxOptions}; `startSandbox()` needs none
 * @returns the URLs, the store and `close()`
 * @throws when a port is taken (servers already started are closed first)
 */
export async function startSandbox(options: StartSandboxOptions = {}): Promise<SandboxHandle> {
  const host = options.host ?? '127.0.0.1';
  const base = options.port ?? 0;
  const ports: Record<SandboxServerName, number> = {
    bff: options.ports?.bff ?? base,
    sticker: options.ports?.sticker ?? (base === 0 ? 0 : base + 1),
    external: options.ports?.external ?? (base === 0 ? 0 : base + 2),
  };
  const now = options.now ?? Date.now;
  const store = new SandboxStore({
    now,
    ...(options.seed !== undefined ? { seed: options.seed } : {}),
    ...(options.tokenTtlSeconds !== undefined ? { tokenTtlSeconds: options.tokenTtlSeconds } : {}),
    ...(options.refreshGraceSeconds !== undefined ? { refreshGraceSeconds: options.refreshGraceSeconds } : {}),
    ...(options.recoveryCodeTtlSeconds !== undefined ? { recoveryCodeTtlSeconds: options.recoveryCodeTtlSeconds } : {}),
    ...(options.faultLimits !== undefined ? { faultLimits: options.faultLimits } : {}),
  });
  const tokens = new SandboxTokens(now);
  const urls: SandboxServerUrls = { bff: '', sticker: '', external: '' };
  const rootLogger: FastifyBaseLogger | undefined =
    options.logger === true ? pino({ name: 'sandbox', level: 'info' }) : options.logger || undefined;

  const areasOf: Record<SandboxServerName, readonly SandboxArea[]> = {
    bff: [...bffAreas, ...(options.areas?.bff ?? [])],
    sticker: [...stickerAreas, ...(options.areas?.sticker ?? [])],
    external: [...externalAreas, ...(options.areas?.external ?? [])],
  };
  const servers = {} as Record<SandboxServerName, FastifyInstance>;
  try {
    for (const name of ['bff', 'sticker', 'external'] as const) {
      const ctx: SandboxContext = { server: name, store, tokens, traffic: store.traffic[name], urls };
      const app = await createSandboxServer(ctx, areasOf[name], {
        ...(rootLogger ? { logger: rootLogger.child({ sandbox: name }) } : {}),
        requestLogging: options.requestLogging === true,
      });
      servers[name] = app;
      await app.listen({ host, port: ports[name], listenTextResolver: (address) => `sandbox ${name} listening at ${address}` });
      urls[name] = `http://${urlHost(host)}:${portOf(app)}`;
    }
  } catch (error) {
    await Promise.allSettled(Object.values(servers).map((app) => app.close()));
    throw error;
  }

  const env: SandboxEnv = Object.freeze({
    BFF_BASE_URL: urls.bff,
    STICKER_API_URL: urls.sticker,
    REFERRAL_V1_API_URL: urls.external + EXTERNAL_PATHS.referralV1,
    REFERRAL_V2_API_URL: urls.external + EXTERNAL_PATHS.referralV2,
    FTD_CASHBACK_VERIFY_URL: urls.external + EXTERNAL_PATHS.ftdCashbackVerify,
    FTD_CASHBACK_SEND_URL: urls.external + EXTERNAL_PATHS.ftdCashbackSend,
    ATTRIBUTION_S2S_URL: urls.external + EXTERNAL_PATHS.attributionS2s,
    CACHE_PURGE_URL: urls.external + EXTERNAL_PATHS.cachePurge,
  });
  Object.freeze(urls);

  // The banner (where the sandbox serves, the demo logins) is one log entry, written once.
  rootLogger?.info({ ...env }, sandboxBanner(env));

  let closing: Promise<void> | null = null;
  return Object.freeze({
    bffUrl: env.BFF_BASE_URL,
    stickerApiUrl: env.STICKER_API_URL,
    referralV1ApiUrl: env.REFERRAL_V1_API_URL,
    referralV2ApiUrl: env.REFERRAL_V2_API_URL,
    ftdCashbackVerifyUrl: env.FTD_CASHBACK_VERIFY_URL,
    ftdCashbackSendUrl: env.FTD_CASHBACK_SEND_URL,
    attributionS2sUrl: env.ATTRIBUTION_S2S_URL,
    cachePurgeUrl: env.CACHE_PURGE_URL,
    externalUrl: urls.external,
    env,
    store,
    servers: Object.freeze({ ...servers }),
    async tokenFor(login: string): Promise<string> {
      const user = store.findUserByLogin(login);
      if (!user) throw new Error(`no sandbox user for ${login}`);
      return (await issueToken(store, tokens, user)).token.access_token;
    },
    close(): Promise<void> {
      closing ??= Promise.all(Object.values(servers).map((app) => app.close())).then(() => undefined);
      return closing;
    },
  });
}

/**
 * The start-up banner of the sandbox: where it serves, and the demo logins with their behaviour.
 * Written once: by {@link startSandbox} when it has a logger (`npm run sandbox`), else by `npm start`
 * in front of the proxy.
 *
 * @param urls - the sandbox's URLs by configuration variable (`SandboxHandle.env`).
 * @param heading - the first line.
 * @returns the banner's text, several lines without a final newline.
 * @example
 * app.log.info({ sandbox: sandbox.env }, sandboxBanner(sandbox.env));
 */
export function sandboxBanner(
  urls: Partial<Readonly<SandboxEnv>>,
  heading = 'sandbox listening (BFF, sticker API, external services)',
): string {
  return [
    heading,
    `  BFF ${urls.BFF_BASE_URL ?? '-'}, sticker API ${urls.STICKER_API_URL ?? '-'}`,
    '  demo logins:',
    ...DEMO_LOGINS.map((d) => `    ${d.login} / ${d.password} (CPF ${d.document}): ${d.behaviour}`),
  ].join('\n');
}

export type { SandboxArea, SandboxContext, SandboxServerUrls } from './context.js';
export { sandboxContext } from './context.js';
export { isValidCpf, completeCpf } from './cpf.js';
export { type Authenticated, authenticate, GUARD_BODIES, type GuardFailure, requireSession, requireUser, withUser } from './bff/guard.js';
export { EXTERNAL_PATHS } from './external/index.js';
export {
  DEMO_LOGINS,
  DEMO_PASSWORD,
  DEMO_SOCIAL_TOKEN,
  DEMO_TWO_FACTOR_CODE,
  type DemoLogin,
  type SandboxSeedOptions,
  type SeedUserInput,
} from './seed.js';
export {
  type AreaStateSlot,
  defineAreaState,
  defineUserState,
  type RecoveryCode,
  type RegistrationRecord,
  SandboxStore,
  type UserStateSlot,
} from './store.js';
export type { FailRuleInput, RecordedRequest, SandboxServerName } from './traffic.js';
export { DEFAULT_FAULT_LIMITS, type FaultKind, type FaultLimits, type FaultRule, type FaultRuleInput, FaultRules } from './faults.js';
export type * from './types.js';
