/**
 * KYC endpoints of the sandbox BFF (spec 4.8 "Upstream" column).
 *
 * | upstream | behaviour |
 * |---|---|
 * | `GET /bff/users/kyc?source=` | starts a verification: `{ kyc_id, status: "pending", flow: "normal", source, verification_url }`; the profile's `latestKyc` becomes pending |
 * | `GET /bff/users/kyc/recovery?source=` | the same in the recovery flow (`flow: "recovery"`) |
 * | `GET /bff/users/kyc/status?kyc_id=` | `{ kyc_id, status, flow, … }`: `pending`, then `approved` from the {@link APPROVED_AFTER_POLLS}th poll on (the profile's `latestKyc` follows) |
 * | `GET /bff/users/kyc/status/recovery?kyc_id=` | the same for a recovery verification |
 *
 * A status request for an unknown id, another user's id or the other flow's id is 404
 * `kyc_not_found`; without `kyc_id` it is 422 `validation_error`.
 *
 * @module
 */
import { randomBytes } from 'node:crypto';
import type { SandboxArea } from '../context.js';
import { asRecord, sendError, sendValidationError } from '../http.js';
import { defineUserState } from '../store.js';
import { withUser } from './guard.js';

/** A pending verification is approved from this status poll on. */
export const APPROVED_AFTER_POLLS = 2;

type Flow = 'normal' | 'recovery';

interface Verification {
  kyc_id: string;
  flow: Flow;
  source: string | null;
  status: 'pending' | 'approved';
  polls: number;
  created_at: string;
  updated_at: string;
}

const kycState = defineUserState('kyc', () => ({ verifications: new Map<string, Verification>(), nextLevel: 2 }));

/** The KYC area of the BFF. */
export const kycArea: SandboxArea = {
  name: 'kyc',
  register(app, ctx) {
    const { store } = ctx;
    const start = (flow: Flow) =>
      withUser(async (request, _reply, user) => {
        const source = asRecord(request.query).source;
        const now = new Date(store.now()).toISOString();
        const verification: Verification = {
          kyc_id: `kyc_${randomBytes(6).toString('hex')}`,
          flow,
          source: typeof source === 'string' && source !== '' ? source : null,
          status: 'pending',
          polls: 0,
          created_at: now,
          updated_at: now,
        };
        store.userState(kycState, user).verifications.set(verification.kyc_id, verification);
        user.profile.latestKyc = {
          id: user.id * 10 + 3,
          status: 'pending',
          level: user.profile.latestKyc?.level ?? 0,
          provider: 'sandbox-kyc',
          created_at: now,
          updated_at: now,
        };
        const { polls: _polls, ...view } = verification;
        return { ...view, verification_url: `https://kyc.sandbox.example/verify/${verification.kyc_id}` };
      });
    const status = (flow: Flow) =>
      withUser(async (request, reply, user) => {
        const id = asRecord(request.query).kyc_id;
        if (typeof id !== 'string' || id === '') return sendValidationError(reply, { kyc_id: ['The kyc_id field is required.'] });
        const state = store.userState(kycState, user);
        const verification = state.verifications.get(id);
        if (!verification || verification.flow !== flow) return sendError(reply, 404, 'kyc_not_found', 'Verification not found.');
        verification.polls += 1;
        if (verification.status === 'pending' && verification.polls >= APPROVED_AFTER_POLLS) {
          verification.status = 'approved';
          verification.updated_at = new Date(store.now()).toISOString();
          const latest = user.profile.latestKyc;
          if (latest) {
            latest.status = 'approved';
            latest.level = Math.max(latest.level, 1) + (flow === 'normal' ? 1 : 0);
            latest.updated_at = verification.updated_at;
          }
          user.info.force_request_kyc = false;
          user.info.force_request_kyc_reasons = [];
        }
        const { polls: _polls, ...view } = verification;
        return view;
      });
    app.get('/bff/users/kyc', start('normal'));
    app.get('/bff/users/kyc/recovery', start('recovery'));
    app.get('/bff/users/kyc/status', status('normal'));
    app.get('/bff/users/kyc/status/recovery', status('recovery'));
  },
};
