/**
 * The sandbox external services (spec 4.3 referrals, 4.10 cashback, attribution, cache purge),
 * all on one server, each under its own prefix:
 *
 * | service | base path | configuration variable |
 * |---|---|---|
 * | referral v1 | `/referral-v1` | `REFERRAL_V1_API_URL` |
 * | referral v2 | `/referral-v2` | `REFERRAL_V2_API_URL` |
 * | first-deposit cashback verifier | `/ftd-cashback/verify` | `FTD_CASHBACK_VERIFY_URL` |
 * | first-deposit cashback sender | `/ftd-cashback/send` | `FTD_CASHBACK_SEND_URL` |
 * | attribution provider | `/attribution/s2s` | `ATTRIBUTION_S2S_URL` |
 * | worker-cache purge | `/cache/purge` | `CACHE_PURGE_URL` |
 *
 * To add routes, create `external/<service>.ts` exporting a `SandboxArea` (with `prefix` set to
 * the base path when it has sub-routes) and append it to {@link externalAreas}.
 *
 * @module
 */
import type { SandboxArea } from '../context.js';
import { attributionArea } from './attribution.js';
import { cachePurgeArea } from './cache-purge.js';
import { ftdCashbackArea } from './ftd-cashback.js';
import { referralArea } from './referral.js';

export { EXTERNAL_PATHS } from './paths.js';

/** Areas of the external services server. */
export const externalAreas: readonly SandboxArea[] = [referralArea, ftdCashbackArea, attributionArea, cachePurgeArea];
