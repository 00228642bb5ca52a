/**
 * The sandbox BFF: the areas registered on the BFF server, in order.
 *
 * To add an upstream area (spec part 4), create `bff/<area>.ts` exporting a `SandboxArea` and
 * append it to {@link bffAreas}. Routes use the exact upstream paths of the specification's
 * "Upstream" column; authenticated ones go through `requireUser` / `withUser` from `./guard.js`.
 *
 * @module
 */
import type { SandboxArea } from '../context.js';
import { bffAdminArea } from './admin.js';
import { authArea } from './auth.js';
import { brandArea } from './brand.js';
import { gamesArea } from './games.js';
import { incomeReportArea } from './income-report.js';
import { kycArea } from './kyc.js';
import { liveArea } from './live.js';
import { paymentsArea } from './payments.js';
import { rewardsArea } from './rewards.js';
import { sportsArea } from './sports.js';
import { userArea } from './user.js';
import { validationArea } from './validation.js';
import { walletArea } from './wallet.js';

/** Areas of the BFF server (spec part 4, one file each). */
export const bffAreas: readonly SandboxArea[] = [
  bffAdminArea,
  authArea, // spec 4.1
  validationArea, // spec 4.2
  userArea, // spec 4.3
  walletArea, // spec 4.4
  paymentsArea, // spec 4.5
  gamesArea, // spec 4.6
  sportsArea, // spec 4.7
  liveArea, // spec 4.7, the live feeds of the raw passthrough
  kycArea, // spec 4.8
  rewardsArea, // spec 4.8
  incomeReportArea, // spec 4.8
  brandArea, // spec 4.11
];

export { type Authenticated, authenticate, GUARD_BODIES, type GuardFailure, requireSession, requireUser, withUser } from './guard.js';
export { type IssuedToken, issueToken } from './session.js';
