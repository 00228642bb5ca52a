/**
 * In-memory state of the sandbox: users, sessions, password-recovery codes, registrations, the
 * traffic of each server, and the state of every other area.
 *
 * Other areas keep their state here without editing this file: declare a slot once in the area's
 * module and read it through the store.
 *
 * @example
 * ```ts
 * // src/sandbox/bff/wallet.ts
 * import { defineUserState } from '../store.js';
 * const walletState = defineUserState('wallet', (user) => ({ transactions: [] as Transaction[] }));
 * // in a handler:
 * const state = ctx.store.userState(walletState, user); // created on first use, dropped by reset()
 * ```
 *
 * @module
 */
import { randomInt, randomUUID } from 'node:crypto';
import { onlyDigits } from './cpf.js';
import { buildUser, demoSeedUsers, type SandboxSeedOptions, type SeedUserInput } from './seed.js';
import { type FaultLimits, FaultRules } from './faults.js';
import { type SandboxServerName, TrafficLog } from './traffic.js';
import type { SandboxSession, SandboxUser, SessionEndReason } from './types.js';

/** Per-user state of one area; see {@link defineUserState}. */
export interface UserStateSlot<T> {
  /** Area name, for the admin dump (`GET /__sandbox/users`). */
  readonly area: string;
  /** Builds the first value for a user (seeded or registered later). */
  readonly init: (user: SandboxUser, store: SandboxStore) => T;
}

/** Area-wide state not tied to a user (catalogues, counters); see {@link defineAreaState}. */
export interface AreaStateSlot<T> {
  readonly area: string;
  readonly init: (store: SandboxStore) => T;
}

/**
 * Declares per-user state for an area. The value is built lazily by `init` the first time
 * {@link SandboxStore.userState} asks for it and forgotten by {@link SandboxStore.reset}.
 * Slots are told apart by identity, so two areas may use the same name.
 */
export function defineUserState<T>(area: string, init: (user: SandboxUser, store: SandboxStore) => T): UserStateSlot<T> {
  return Object.freeze({ area, init });
}

/** Declares area-wide state; built lazily, forgotten by {@link SandboxStore.reset}. */
export function defineAreaState<T>(area: string, init: (store: SandboxStore) => T): AreaStateSlot<T> {
  return Object.freeze({ area, init });
}

/** A password-recovery code (spec 4.1, `/auth/passwords/reset/*`). Times are epoch ms. */
export interface RecoveryCode {
  userId: number;
  /** The login as the client sent it. */
  login: string;
  /** Six digits. */
  code: string;
  channel: 'email' | 'sms';
  createdAt: number;
  expiresAt: number;
  /** Wrong codes tried so far. */
  attempts: number;
  /** When `reset/validate-code` accepted it. */
  validatedAt: number | null;
  /** When `reset/confirm` used it; a used code is no longer accepted. */
  usedAt: number | null;
}

/** Attribution fields of RegisterSimplifiedPayload (spec 2.4) as received; absent ones are omitted. */
export interface RegistrationAttribution {
  utm_source?: unknown;
  utm_campaign?: unknown;
  utm_content?: unknown;
  utm_medium?: unknown;
  src?: unknown;
  ga_client_id?: unknown;
  affiliation_code?: unknown;
  app_source?: unknown;
  user_prudential_limit_active?: unknown;
}

/** One successful registration, for tests that check what the proxy forwarded. */
export interface RegistrationRecord {
  /** Epoch ms. */
  at: number;
  /** Upstream path that received it, e.g. `/bff/register-simplified`. */
  path: string;
  /** Social provider for `/bff/social/{provider}/registerSimplified`, else null. */
  provider: string | null;
  userId: number;
  email: string;
  attribution: RegistrationAttribution;
  /** The whole body as received, with `password` replaced by `[redacted]`. */
  body: Record<string, unknown>;
}

/** Settings of a store. */
export interface SandboxStoreOptions {
  /** Clock, epoch milliseconds. Default `Date.now`. */
  now?: () => number;
  seed?: SandboxSeedOptions;
  /** Lifetime of a session and its JWT, in seconds. Default 25 200 (7 h: the 6 h refresh cycle plus margin). */
  tokenTtlSeconds?: number;
  /** How long a session replaced by a refresh keeps working, in seconds. Default 60. */
  refreshGraceSeconds?: number;
  /** Lifetime of a recovery code, in seconds. Default 900. */
  recoveryCodeTtlSeconds?: number;
  /** Bounds of the fault rules of each server (`faults.ts`); each field defaults to `DEFAULT_FAULT_LIMITS`. */
  faultLimits?: Partial<FaultLimits>;
}

/** Attribution keys recorded from a registration body. */
export const ATTRIBUTION_FIELDS = [
  'utm_source',
  'utm_campaign',
  'utm_content',
  'utm_medium',
  'src',
  'ga_client_id',
  'affiliation_code',
  'app_source',
  'user_prudential_limit_active',
] as const satisfies readonly (keyof RegistrationAttribution)[];

/** The sandbox state. One instance per `startSandbox()`, shared by its three servers. */
export class SandboxStore {
  /** Clock, epoch milliseconds. */
  readonly now: () => number;
  /** Session lifetime, seconds. */
  readonly tokenTtlSeconds: number;
  /** Grace period of a session replaced by a refresh, seconds. */
  readonly refreshGraceSeconds: number;
  /** Recovery-code lifetime, seconds. */
  readonly recoveryCodeTtlSeconds: number;

  /** Users by id. */
  readonly users = new Map<number, SandboxUser>();
  /** Sessions by id (the JWT `jti`). */
  readonly sessions = new Map<string, SandboxSession>();
  /** Latest recovery code per user id. */
  readonly recoveryCodes = new Map<number, RecoveryCode>();
  /** Successful registrations, oldest first. */
  readonly registrations: RegistrationRecord[] = [];
  /** Requests seen and fail-next rules, per server. */
  readonly traffic: Readonly<Record<SandboxServerName, TrafficLog>> = Object.freeze({
    bff: new TrafficLog('bff'),
    sticker: new TrafficLog('sticker'),
    external: new TrafficLog('external'),
  });
  /** Persistent slow / hang / fail rules and the requests they hold, per server. */
  readonly faults: Readonly<Record<SandboxServerName, FaultRules>>;

  readonly #seed: SandboxSeedOptions;
  readonly #userState = new Map<UserStateSlot<unknown>, Map<number, unknown>>();
  readonly #areaState = new Map<AreaStateSlot<unknown>, unknown>();
  #nextUserId = 1;

  constructor(options: SandboxStoreOptions = {}) {
    this.now = options.now ?? Date.now;
    this.tokenTtlSeconds = options.tokenTtlSeconds ?? 7 * 3600;
    this.refreshGraceSeconds = options.refreshGraceSeconds ?? 60;
    this.recoveryCodeTtlSeconds = options.recoveryCodeTtlSeconds ?? 900;
    this.faults = Object.freeze({
      bff: new FaultRules(options.faultLimits),
      sticker: new FaultRules(options.faultLimits),
      external: new FaultRules(options.faultLimits),
    });
    this.#seed = options.seed ?? {};
    this.reset();
  }

  /**
   * Forgets everything and seeds again: users, sessions (every token issued before answers
   * `invalid_token`), recovery codes, registrations, area state, recorded requests, fail-next rules
   * and fault rules (the requests those held get their real answer at once, from the new seed).
   */
  reset(): void {
    this.users.clear();
    this.sessions.clear();
    this.recoveryCodes.clear();
    this.registrations.length = 0;
    this.#userState.clear();
    this.#areaState.clear();
    for (const log of Object.values(this.traffic)) log.clear();
    for (const rules of Object.values(this.faults)) rules.clear();
    this.#nextUserId = 1;
    const inputs = [...(this.#seed.includeDemoUsers === false ? [] : demoSeedUsers(this.now())), ...(this.#seed.users ?? [])];
    for (const input of inputs) this.addUser(input);
  }

  /**
   * Adds a user built from a seed (see {@link buildUser}).
   *
   * @throws {Error} when the e-mail or id is taken.
   */
  addUser(input: SeedUserInput): SandboxUser {
    if (this.findUserByEmail(input.email)) throw new Error(`e-mail already used: ${input.email}`);
    if (input.id !== undefined && this.users.has(input.id)) throw new Error(`user id already used: ${input.id}`);
    const id = input.id ?? Math.max(this.#nextUserId, 2001);
    const user = buildUser(id, input, this.now());
    this.users.set(user.id, user);
    this.#nextUserId = Math.max(this.#nextUserId, user.id + 1);
    return user;
  }

  /** User by e-mail, case-insensitive. */
  findUserByEmail(email: string): SandboxUser | undefined {
    const wanted = email.trim().toLowerCase();
    for (const user of this.users.values()) if (user.profile.email.toLowerCase() === wanted) return user;
    return undefined;
  }

  /** User by national document number (punctuation ignored). */
  findUserByDocument(number: string): SandboxUser | undefined {
    const wanted = onlyDigits(number);
    if (wanted === '') return undefined;
    for (const user of this.users.values()) if (user.profile.document?.number === wanted) return user;
    return undefined;
  }

  /** User by login: an e-mail, or a document number (spec 2.1). */
  findUserByLogin(login: string): SandboxUser | undefined {
    return login.includes('@') ? this.findUserByEmail(login) : this.findUserByDocument(login);
  }

  /** Opens a session for a user, valid {@link SandboxStore.tokenTtlSeconds}. */
  createSession(userId: number): SandboxSession {
    const issuedAt = this.now();
    const session: SandboxSession = {
      id: randomUUID(),
      userId,
      issuedAt,
      expiresAt: issuedAt + this.tokenTtlSeconds * 1000,
      revokedAt: null,
      revokeReason: null,
      replacedBy: null,
    };
    this.sessions.set(session.id, session);
    return session;
  }

  /** Sessions of a user, oldest first. */
  sessionsOf(userId: number): SandboxSession[] {
    return [...this.sessions.values()].filter((s) => s.userId === userId);
  }

  /** Revokes a session: its token answers `revoked`. Returns false when unknown. */
  revokeSession(id: string, reason: SessionEndReason): boolean {
    const session = this.sessions.get(id);
    if (!session) return false;
    if (session.revokedAt === null) {
      session.revokedAt = this.now();
      session.revokeReason = reason;
    }
    return true;
  }

  /** Expires a session now: its token answers `token_expired`. Returns false when unknown. */
  expireSession(id: string): boolean {
    const session = this.sessions.get(id);
    if (!session) return false;
    session.expiresAt = Math.min(session.expiresAt, this.now());
    return true;
  }

  /** Marks `old` as replaced by `next`; `old` keeps working for the refresh grace period. */
  supersedeSession(old: SandboxSession, next: SandboxSession): void {
    old.replacedBy = next.id;
    old.expiresAt = Math.min(old.expiresAt, this.now() + this.refreshGraceSeconds * 1000);
  }

  /** Creates a six-digit recovery code for a user, replacing the previous one. */
  createRecoveryCode(user: SandboxUser, login: string, channel: 'email' | 'sms'): RecoveryCode {
    const createdAt = this.now();
    const code: RecoveryCode = {
      userId: user.id,
      login,
      code: String(randomInt(0, 1_000_000)).padStart(6, '0'),
      channel,
      createdAt,
      expiresAt: createdAt + this.recoveryCodeTtlSeconds * 1000,
      attempts: 0,
      validatedAt: null,
      usedAt: null,
    };
    this.recoveryCodes.set(user.id, code);
    return code;
  }

  /**
   * Per-user state of an area, created by the slot's `init` on first use.
   *
   * @throws {Error} when the user id is unknown.
   */
  userState<T>(slot: UserStateSlot<T>, user: SandboxUser | number): T {
    const record = typeof user === 'number' ? this.users.get(user) : user;
    if (!record) throw new Error(`unknown user id: ${String(user)}`);
    let perUser = this.#userState.get(slot as UserStateSlot<unknown>);
    if (!perUser) {
      perUser = new Map();
      this.#userState.set(slot as UserStateSlot<unknown>, perUser);
    }
    if (!perUser.has(record.id)) perUser.set(record.id, slot.init(record, this));
    return perUser.get(record.id) as T;
  }

  /** Area-wide state, created by the slot's `init` on first use. */
  areaState<T>(slot: AreaStateSlot<T>): T {
    if (!this.#areaState.has(slot as AreaStateSlot<unknown>)) {
      this.#areaState.set(slot as AreaStateSlot<unknown>, slot.init(this));
    }
    return this.#areaState.get(slot as AreaStateSlot<unknown>) as T;
  }

  /** Existing per-user state of a user, keyed by area name (for the admin dump). */
  userStateSnapshot(userId: number): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const [slot, perUser] of this.#userState) {
      if (perUser.has(userId)) out[slot.area] = perUser.get(userId);
    }
    return out;
  }
}
