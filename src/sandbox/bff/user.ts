/**
 * User endpoints of the sandbox BFF (spec 4.3 "Upstream" column).
 *
 * | upstream | behaviour |
 * |---|---|
 * | `POST /users/update/{id}` | profile fields (`name`, `birth_date`, `gender`, `mother_name`, `language`) → `{ user }`; 403 `forbidden` when `{id}` is not the token's user |
 * | `PATCH /bff/users/update-address` | the address fields → `{ address }` |
 * | `PATCH /bff/users/add-phone` | `{ phone, ddi? }` |
 * | `POST /bff/users/check-password` | `{ password }` → `{ valid }` |
 * | `POST /users/change-password/{id}` | `{ current_password (or old_password), password, password_confirmation? }`; 403 `forbidden`, 422 `invalid_password`, `weak_password`, `password_mismatch` |
 * | `PATCH /bff/users/self-two-factor` | `{ enabled }` → `two_factor_enabled` |
 * | `POST /documents/{endpoint}` | a multipart upload (at most 12 MiB); `selfie`, `document-front`, `document-back`, `proof-of-address` → 201 `{ id, endpoint, bytes, status: "received" }`; 404 `unknown_document_type`; 422 `file_required` |
 * | `PATCH /bff/users/self-mkt` | `{ opt_in }` → `mkt_accepted_at` |
 * | `PATCH /bff/users/update-user-info-metadata` | merges the fields into the user's metadata → `{ metadata }` |
 * | `PATCH /bff/users/update-pending-data` | as `add-initial-data`, for the fields still empty |
 * | `PATCH /bff/users/update-limits` | the `spa_*` fields of spec 2.6 (cents, minutes) → `{ userInfo }` |
 * | `PATCH /bff/users/timeout-limits` | `{ days }` (1-90) → `{ paused_until }` |
 * | `PATCH /bff/users/self-exclusion` | `{ months }` (6-60, or `permanent: true`) → `{ excluded_until }` |
 * | `GET /bff/users/login-history?page=` | the user's sessions as logins, 10 per page |
 * | `GET /bff/games/user-last-casino-games-dl` | `{ data: [{ slug, name, provider, played_at }] }` |
 * | `GET /bff/users/support-desk/create-or-update-user` | `{ token, url }` |
 * | `POST /users/list-referrals` | `{ data, total }` |
 *
 * @module
 */
import { randomBytes } from 'node:crypto';
import type { SandboxArea } from '../context.js';
import { asRecord, checkFields, sendError, sendValidationError } from '../http.js';
import { defineUserState } from '../store.js';
import type { AuthUserInfo, SandboxUser } from '../types.js';
import { MIN_PASSWORD_LENGTH } from './auth.js';
import { withUser } from './guard.js';
import { pageOf } from './wallet.js';
import { ADDRESS_FIELDS, addressState } from './validation.js';

/** Document kinds `POST /documents/{endpoint}` takes. */
export const SANDBOX_DOCUMENT_ENDPOINTS = ['selfie', 'document-front', 'document-back', 'proof-of-address'] as const;

interface StoredDocument {
  id: string;
  endpoint: string;
  bytes: number;
  content_type: string;
  received_at: string;
}

/** Per-user state of the user area. */
export const userAreaState = defineUserState('user', () => ({
  documents: [] as StoredDocument[],
  metadata: {} as Record<string, unknown>,
  pausedUntil: null as string | null,
  excludedUntil: null as string | null,
}));

const LIMIT_FIELDS = [
  'spa_bet_limit',
  'spa_loss_limit',
  'spa_deposit_limit',
  'spa_withdrawal_limit',
  'spa_time_limit',
  'spa_period_limit',
  'spa_note',
] as const satisfies readonly (keyof AuthUserInfo)[];

const PROFILE_FIELDS = { name: 'string?', birth_date: 'string?', gender: 'number?', mother_name: 'string?', language: 'string?' } as const;

function applyProfile(user: SandboxUser, fields: Record<string, unknown>, onlyEmpty: boolean): void {
  const profile = user.profile as unknown as Record<string, unknown>;
  for (const [key, value] of Object.entries(fields)) {
    if (value === undefined || (onlyEmpty && profile[key] !== '' && profile[key] !== 0 && profile[key] !== null)) continue;
    profile[key] = value;
    if (key === 'name' && typeof value === 'string') {
      const [first = value, ...rest] = value.trim().split(/\s+/);
      user.profile.first_name = first;
      user.profile.last_name = rest.join(' ');
    }
  }
}

const LAST_GAMES = [
  { slug: 'fortune-tiger', name: 'Fortune Tiger', provider: 'pg-soft' },
  { slug: 'aviator', name: 'Aviator', provider: 'spribe' },
  { slug: 'gates-of-olympus', name: 'Gates of Olympus', provider: 'pragmatic-play' },
];

/** The user area of the BFF. */
export const userArea: SandboxArea = {
  name: 'user',
  register(app, ctx) {
    const { store } = ctx;
    const nowIso = () => new Date(store.now()).toISOString();

    app.post<{ Params: { id: string } }>(
      '/users/update/:id',
      withUser<{ Params: { id: string } }>(async (request, reply, user) => {
        if (request.params.id !== String(user.id)) return sendError(reply, 403, 'forbidden', 'You can only update your own profile.');
        const checked = checkFields(request.body, PROFILE_FIELDS);
        if (!checked.ok) return sendValidationError(reply, checked.errors);
        applyProfile(user, checked.value, false);
        user.profile.updated_at = nowIso();
        return { message: 'Profile updated', user: user.profile };
      }),
    );

    app.patch(
      '/bff/users/update-address',
      withUser(async (request, _reply, user) => {
        const body = asRecord(request.body);
        const state = store.userState(addressState, user);
        const changes = Object.fromEntries(ADDRESS_FIELDS.filter((f) => body[f] !== undefined).map((f) => [f, body[f]]));
        state.address = { ...state.address, ...changes };
        return { message: 'Address updated', address: state.address };
      }),
    );

    app.patch(
      '/bff/users/add-phone',
      withUser(async (request, reply, user) => {
        const checked = checkFields(request.body, { phone: 'string', ddi: 'string?' });
        if (!checked.ok) return sendValidationError(reply, checked.errors);
        user.profile.phone = checked.value.phone.replace(/\D/g, '');
        if (checked.value.ddi) user.profile.ddi = checked.value.ddi;
        return { message: 'Phone added', ddi: user.profile.ddi, phone: user.profile.phone };
      }),
    );

    app.post(
      '/bff/users/check-password',
      withUser(async (request, _reply, user) => ({ valid: asRecord(request.body).password === user.password })),
    );

    app.post<{ Params: { id: string } }>(
      '/users/change-password/:id',
      withUser<{ Params: { id: string } }>(async (request, reply, user) => {
        if (request.params.id !== String(user.id)) return sendError(reply, 403, 'forbidden', 'You can only change your own password.');
        const body = asRecord(request.body);
        const current = body.current_password ?? body.old_password;
        const checked = checkFields(body, { password: 'string', password_confirmation: 'string?' });
        if (!checked.ok) return sendValidationError(reply, checked.errors);
        if (current !== user.password) return sendError(reply, 422, 'invalid_password', 'The current password is wrong.');
        const { password, password_confirmation } = checked.value;
        if (password_confirmation !== undefined && password_confirmation !== password) {
          return sendError(reply, 422, 'password_mismatch', 'The password confirmation does not match.');
        }
        if (password.length < MIN_PASSWORD_LENGTH) {
          return sendError(reply, 422, 'weak_password', `The password must be at least ${MIN_PASSWORD_LENGTH} characters.`);
        }
        user.password = password;
        return { message: 'Password changed' };
      }),
    );

    app.patch(
      '/bff/users/self-two-factor',
      withUser(async (request, reply, user) => {
        const checked = checkFields(request.body, { enabled: 'boolean' });
        if (!checked.ok) return sendValidationError(reply, checked.errors);
        user.info.two_factor_enabled = checked.value.enabled;
        user.info.two_factor_at = checked.value.enabled ? nowIso() : null;
        return { two_factor_enabled: user.info.two_factor_enabled };
      }),
    );

    app.post<{ Params: { endpoint: string } }>(
      '/documents/:endpoint',
      { bodyLimit: 12 * 1024 * 1024 },
      withUser<{ Params: { endpoint: string } }>(async (request, reply, user) => {
        const { endpoint } = request.params;
        if (!(SANDBOX_DOCUMENT_ENDPOINTS as readonly string[]).includes(endpoint)) {
          return sendError(reply, 404, 'unknown_document_type', `Unknown document type ${endpoint}.`);
        }
        const contentType = String(request.headers['content-type'] ?? '');
        const body = request.body;
        if (!contentType.startsWith('multipart/form-data') || !Buffer.isBuffer(body) || body.length === 0) {
          return sendError(reply, 422, 'file_required', 'Send the document as multipart/form-data.');
        }
        const doc: StoredDocument = {
          id: `doc_${randomBytes(6).toString('hex')}`,
          endpoint,
          bytes: body.length,
          content_type: /Content-Type:\s*([^\r\n]+)/i.exec(body.subarray(0, 1024).toString('latin1'))?.[1] ?? 'application/octet-stream',
          received_at: nowIso(),
        };
        store.userState(userAreaState, user).documents.push(doc);
        return reply.code(201).send({ ...doc, status: 'received' });
      }),
    );

    app.patch(
      '/bff/users/self-mkt',
      withUser(async (request, _reply, user) => {
        const body = asRecord(request.body);
        const optIn = body.opt_in ?? body.mkt ?? body.optIn;
        if (typeof optIn === 'boolean') user.info.mkt_accepted_at = optIn ? nowIso() : null;
        return { mkt_accepted_at: user.info.mkt_accepted_at ?? null };
      }),
    );

    app.patch(
      '/bff/users/update-user-info-metadata',
      withUser(async (request, _reply, user) => {
        const state = store.userState(userAreaState, user);
        Object.assign(state.metadata, asRecord(request.body));
        return { metadata: state.metadata };
      }),
    );

    app.patch(
      '/bff/users/update-pending-data',
      withUser(async (request, reply, user) => {
        const checked = checkFields(request.body, PROFILE_FIELDS);
        if (!checked.ok) return sendValidationError(reply, checked.errors);
        applyProfile(user, checked.value, true);
        return { message: 'Pending data updated', user: user.profile };
      }),
    );

    app.patch(
      '/bff/users/update-limits',
      withUser(async (request, reply, user) => {
        const body = asRecord(request.body);
        const info = user.info as unknown as Record<string, unknown>;
        for (const field of LIMIT_FIELDS) {
          const value = body[field];
          if (value === undefined) continue;
          const ok =
            value === null ||
            (field === 'spa_period_limit'
              ? ['daily', 'weekly', 'monthly'].includes(String(value))
              : field === 'spa_note'
                ? typeof value === 'string'
                : Number.isInteger(value) && (value as number) >= 0);
          if (!ok) return sendValidationError(reply, { [field]: [`The ${field} field is invalid.`] });
          info[field] = value;
        }
        return { message: 'Limits updated', userInfo: user.info };
      }),
    );

    app.patch(
      '/bff/users/timeout-limits',
      withUser(async (request, reply, user) => {
        const days = asRecord(request.body).days;
        if (typeof days !== 'number' || !Number.isInteger(days) || days < 1 || days > 90) {
          return sendValidationError(reply, { days: ['The days field must be between 1 and 90.'] });
        }
        const state = store.userState(userAreaState, user);
        state.pausedUntil = new Date(store.now() + days * 86_400_000).toISOString();
        return { message: 'Account paused', paused_until: state.pausedUntil };
      }),
    );

    app.patch(
      '/bff/users/self-exclusion',
      withUser(async (request, reply, user) => {
        const body = asRecord(request.body);
        const state = store.userState(userAreaState, user);
        if (body.permanent === true) {
          state.excludedUntil = 'permanent';
        } else {
          const months = body.months;
          if (typeof months !== 'number' || !Number.isInteger(months) || months < 6 || months > 60) {
            return sendValidationError(reply, { months: ['The months field must be between 6 and 60.'] });
          }
          state.excludedUntil = new Date(store.now() + months * 30 * 86_400_000).toISOString();
        }
        return { message: 'Self-exclusion recorded', excluded_until: state.excludedUntil };
      }),
    );

    app.get(
      '/bff/users/login-history',
      withUser(async (request, _reply, user) => {
        const raw = asRecord(request.query).page;
        const page = typeof raw === 'string' && /^[1-9][0-9]{0,5}$/.test(raw) ? Number(raw) : 1;
        const logins = store
          .sessionsOf(user.id)
          .reverse()
          .map((s) => ({ id: s.id.slice(0, 8), logged_at: new Date(s.issuedAt).toISOString(), ip: '203.0.113.10', device: 'web' }));
        return pageOf(logins, page, 10);
      }),
    );

    app.get(
      '/bff/games/user-last-casino-games-dl',
      withUser(async () => ({
        data: LAST_GAMES.map((g, i) => ({ ...g, played_at: new Date(store.now() - (i + 1) * 3_600_000).toISOString() })),
      })),
    );

    app.get(
      '/bff/users/support-desk/create-or-update-user',
      withUser(async (_request, _reply, user) => ({
        token: `sd_${randomBytes(12).toString('hex')}`,
        url: `https://support.sandbox.example/sso?user=${user.id}`,
      })),
    );

    app.post(
      '/users/list-referrals',
      withUser(async (_request, _reply, user) => {
        const data = [
          { id: user.id * 100 + 1, name: 'Carlos M.', registered_at: '2025-11-02T12:00:00.000Z', deposited: true, reward: 2_000 },
          { id: user.id * 100 + 2, name: 'Paula R.', registered_at: '2025-12-14T09:30:00.000Z', deposited: false, reward: 0 },
        ];
        return { data, total: data.length };
      }),
    );
  },
};
