/**
 * Seed data of the sandbox: the demo logins of docs/behaviour.md "Sandbox logins", the country table
 * and the builder that turns a short {@link SeedUserInput} into a complete AuthUser / AuthUserInfo
 * pair (spec 2.5 and 2.6). Registration uses the same builder.
 *
 * @module
 */
import { randomBytes } from 'node:crypto';
import { completeCpf } from './cpf.js';
import type { AuthUser, AuthUserCountryData, AuthUserInfo, SandboxUser } from './types.js';

/** Password of every demo login. */
export const DEMO_PASSWORD = 'Demo#2026';

/** Second-factor code of `2fa@example.com`; login sends it as a number (spec 2.1). */
export const DEMO_TWO_FACTOR_CODE = 123456;

/** Social token that logs in the demo user with any provider: `demo-<provider>-token`. */
export const DEMO_SOCIAL_TOKEN = 'demo-google-token';

/** One demo login of docs/behaviour.md "Sandbox logins". */
export interface DemoLogin {
  readonly login: string;
  readonly password: string;
  /** CPF digits; login by document number works too (spec 2.1). */
  readonly document: string;
  readonly behaviour: string;
}

/** The demo logins of docs/behaviour.md "Sandbox logins", in its order. */
export const DEMO_LOGINS: readonly DemoLogin[] = Object.freeze([
  Object.freeze({
    login: 'demo@example.com',
    password: DEMO_PASSWORD,
    document: completeCpf('529982247'),
    behaviour: 'ordinary user with a BRL wallet',
  }),
  Object.freeze({
    login: '2fa@example.com',
    password: DEMO_PASSWORD,
    document: completeCpf('111444777'),
    behaviour: `answers type "two_factor_code" until two_factor_code ${DEMO_TWO_FACTOR_CODE} (a number) is sent`,
  }),
  Object.freeze({
    login: 'cancelled@example.com',
    password: DEMO_PASSWORD,
    document: completeCpf('390533447'),
    behaviour: 'answers type "cancelled_account", no token',
  }),
]);

/** Countries the sandbox knows; others fall back to a generic record in USD. */
export const COUNTRIES: Readonly<Record<string, AuthUserCountryData>> = Object.freeze({
  BR: { id: 1, name: 'Brasil', code: 'BR', iso3: 'BRA', ddi: '55', currency: 'BRL', language: 'pt-BR', timezone: 'America/Sao_Paulo' },
  MX: { id: 2, name: 'México', code: 'MX', iso3: 'MEX', ddi: '52', currency: 'MXN', language: 'es-MX', timezone: 'America/Mexico_City' },
  CL: { id: 3, name: 'Chile', code: 'CL', iso3: 'CHL', ddi: '56', currency: 'CLP', language: 'es-CL', timezone: 'America/Santiago' },
  PE: { id: 4, name: 'Perú', code: 'PE', iso3: 'PER', ddi: '51', currency: 'PEN', language: 'es-PE', timezone: 'America/Lima' },
  FI: { id: 5, name: 'Suomi', code: 'FI', iso3: 'FIN', ddi: '358', currency: 'EUR', language: 'fi-FI', timezone: 'Europe/Helsinki' },
  NG: { id: 6, name: 'Nigeria', code: 'NG', iso3: 'NGA', ddi: '234', currency: 'NGN', language: 'en-NG', timezone: 'Africa/Lagos' },
});

/** Country record for an ISO alpha-2 code (any case). */
export function countryData(code: string): AuthUserCountryData {
  const known = COUNTRIES[code.toUpperCase()];
  if (known) return { ...known };
  return {
    id: 99,
    name: code.toUpperCase(),
    code: code.toUpperCase(),
    iso3: code.toUpperCase(),
    ddi: '1',
    currency: 'USD',
    language: 'en-US',
    timezone: 'UTC',
  };
}

/**
 * A user to seed. Only `email` and `password` are required; everything else gets a plausible
 * default. `user` and `userInfo` are applied last, field by field, over the built records.
 */
export interface SeedUserInput {
  email: string;
  password: string;
  /** Default: the next free id. */
  id?: number;
  /** Full name. Default: derived from the e-mail. */
  name?: string;
  /** ISO 3166-1 alpha-2. Default `BR`. */
  country?: string;
  /** National document digits (a CPF in Brazil); `null` for none. Default none. */
  document?: string | null;
  /** National phone number, digits. Default none (empty string). */
  phone?: string;
  /** Phone country prefix. Default: the country's. */
  ddi?: string;
  /** `YYYY-MM-DD`. */
  birthDate?: string;
  /** 1 male, 2 female, 0 not given. */
  gender?: number;
  motherName?: string;
  /** Real-money wallet balance, in cents. Default 0. */
  balance?: number;
  /** Enables the second factor with this code. */
  twoFactorCode?: number | null;
  /** Seeds a cancelled account (`cancelled_account: 1`, `is_active: 0`). */
  cancelled?: boolean;
  affiliationCode?: string;
  /** JSON-encoded nationalities, as in RegisterSimplifiedPayload. Default `["<country>"]`. */
  nationalities?: string;
  /** Marketing opt-in. Default false. */
  optIn?: boolean;
  /** Field overrides of the AuthUser record (spec 2.5). */
  user?: Partial<AuthUser>;
  /** Field overrides of the AuthUserInfo record (spec 2.6). */
  userInfo?: Partial<AuthUserInfo>;
  /** Free initial data for other areas, keyed by area name (read by their state initialisers). */
  areas?: Record<string, unknown>;
}

/** What `startSandbox({ seed })` accepts. */
export interface SandboxSeedOptions {
  /** Users added after the demo users (or instead of them, see `includeDemoUsers`). */
  users?: SeedUserInput[];
  /** Default true. */
  includeDemoUsers?: boolean;
}

const isoAt = (ms: number): string => new Date(ms).toISOString();
const DAY = 86_400_000;

/** The demo users of {@link DEMO_LOGINS}, relative to `now` (epoch ms). */
export function demoSeedUsers(now: number): SeedUserInput[] {
  const [demo, twoFactor, cancelled] = DEMO_LOGINS as [DemoLogin, DemoLogin, DemoLogin];
  return [
    {
      id: 1001,
      email: demo.login,
      password: demo.password,
      name: 'Ana Beatriz Souza',
      country: 'BR',
      document: demo.document,
      phone: '11987654321',
      birthDate: '1990-04-12',
      gender: 2,
      motherName: 'Maria Helena Souza',
      balance: 150_000,
      affiliationCode: 'AFF-DEMO',
      optIn: true,
      user: {
        created_at: '2024-01-15T10:00:00.000Z',
        ftd_date: '2024-01-15T10:20:31.000Z',
        ftd_value: 5_000,
        bonus_enabled: 1,
      },
      userInfo: {
        spa_deposit_limit: 500_000,
        spa_loss_limit: 200_000,
        spa_bet_limit: null,
        spa_withdrawal_limit: null,
        spa_time_limit: 240,
        spa_period_limit: 'monthly',
        spa_note: null,
        login_at: isoAt(now - 2 * DAY),
      },
    },
    {
      id: 1002,
      email: twoFactor.login,
      password: twoFactor.password,
      name: 'Bruno Carvalho Lima',
      country: 'BR',
      document: twoFactor.document,
      phone: '21998765432',
      birthDate: '1985-09-30',
      gender: 1,
      motherName: 'Lucia Carvalho Lima',
      balance: 4_250,
      twoFactorCode: DEMO_TWO_FACTOR_CODE,
      userInfo: { login_at: isoAt(now - 9 * DAY) },
    },
    {
      id: 1003,
      email: cancelled.login,
      password: cancelled.password,
      name: 'Carla Mendes Rocha',
      country: 'BR',
      document: cancelled.document,
      phone: '31991234567',
      birthDate: '1979-02-03',
      gender: 2,
      motherName: 'Teresa Mendes Rocha',
      balance: 0,
      cancelled: true,
    },
  ];
}

function titleCase(word: string): string {
  return word.charAt(0).toUpperCase() + word.slice(1).toLowerCase();
}

function nameFromEmail(email: string): string {
  const local = email.split('@')[0] ?? 'user';
  const words = local.split(/[._\-+\d]+/).filter(Boolean);
  return words.length > 0 ? words.map(titleCase).join(' ') : 'Sandbox User';
}

/**
 * Builds a complete user record.
 *
 * @param id user id (ignored when `input.id` is set)
 * @param input the seed
 * @param now epoch milliseconds, for `updated_at`, `last_login` and the like
 */
export function buildUser(id: number, input: SeedUserInput, now: number): SandboxUser {
  const userId = input.id ?? id;
  const country = countryData(input.country ?? 'BR');
  const name = (input.name ?? nameFromEmail(input.email)).trim();
  const [firstName = name, ...rest] = name.split(/\s+/);
  const createdAt = input.user?.created_at ?? isoAt(now);
  const nowIso = isoAt(now);
  const loginAt = input.userInfo?.login_at ?? isoAt(now - DAY);
  const document = input.document ?? null;
  const cancelled = input.cancelled === true;
  const twoFactorCode = input.twoFactorCode ?? null;
  const usernameBase = (input.email.split('@')[0] ?? 'user').toLowerCase().replace(/[^a-z0-9]+/g, '');

  const profile: AuthUser = {
    id: userId,
    email: input.email,
    username: `${usernameBase || 'user'}${userId}`,
    name,
    first_name: firstName,
    last_name: rest.join(' '),
    phone: input.phone ?? '',
    ddi: input.ddi ?? country.ddi,
    birth_date: input.birthDate ?? '',
    country: country.code,
    language: country.language,
    currency: country.currency,
    token: randomBytes(16).toString('hex'),
    mother_name: input.motherName ?? '',
    created_at: createdAt,
    updated_at: nowIso,
    last_login: loginAt,
    gender: input.gender ?? 0,
    document:
      document === null
        ? null
        : {
            id: userId * 10 + 1,
            type: country.code === 'BR' ? 'cpf' : 'national_id',
            number: document,
            country: country.code,
            verified: !cancelled,
            verified_at: cancelled ? null : createdAt,
          },
    country_data: country,
    wallet: {
      id: userId * 10 + 2,
      user_id: userId,
      currency: country.currency,
      balance: input.balance ?? 0,
      bonus_balance: 0,
      cashback_balance: 0,
      withdrawable_balance: input.balance ?? 0,
      updated_at: nowIso,
    },
    is_active: cancelled ? 0 : 1,
    cancelled_account: cancelled ? 1 : 0,
    bonus_enabled: 1,
    ftd_date: null,
    ftd_value: 0,
    ...(input.affiliationCode !== undefined ? { affiliation_code: input.affiliationCode } : {}),
    latestKyc: {
      id: userId * 10 + 3,
      status: document === null ? 'pending' : 'approved',
      level: document === null ? 0 : 1,
      provider: 'sandbox-kyc',
      created_at: createdAt,
      updated_at: createdAt,
    },
  };
  Object.assign(profile, input.user);

  const acceptedAt = createdAt;
  const info: AuthUserInfo = {
    validate_email_at: cancelled ? '' : acceptedAt,
    login_at: loginAt,
    validate_sms_at: input.phone ? acceptedAt : '',
    login_attempt_qty: 0,
    strong_password: 1,
    seven_days_since_last_login: now - Date.parse(loginAt) > 7 * DAY,
    force_request_kyc: false,
    two_factor_enabled: twoFactorCode !== null,
    two_factor_type: 'email',
    force_request_kyc_reasons: [],
    two_factor_at: twoFactorCode !== null ? acceptedAt : null,
    two_factor_code: null,
    latitude: -23.5505,
    longitude: -46.6333,
    location_at: loginAt,
    nationalities: input.nationalities ?? JSON.stringify([country.code]),
    tc_accepted_at: acceptedAt,
    privacy_accepted_at: acceptedAt,
    lgpd_accepted_at: country.code === 'BR' ? acceptedAt : null,
    law_accepted_at: acceptedAt,
    mkt_accepted_at: input.optIn ? acceptedAt : null,
    spa_bet_limit: null,
    spa_loss_limit: null,
    spa_deposit_limit: null,
    spa_withdrawal_limit: null,
    spa_time_limit: null,
    spa_period_limit: null,
    spa_note: null,
    ...input.userInfo,
  };

  return {
    id: userId,
    password: input.password,
    twoFactorCode,
    profile,
    info,
    areas: { ...input.areas },
  };
}
