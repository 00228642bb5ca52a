/**
 * Every route table of spec part 4, in the specification's order. A table is added here once; the
 * app registers them all, the contract tests walk them.
 *
 * @module
 */
import { albumRoutes } from './album.js';
import { authRoutes } from './auth.js';
import { devRoutes } from './dev.js';
import { externalRoutes } from './external.js';
import { gamesRoutes } from './games.js';
import { incomeReportRoutes } from './income-report.js';
import { infraRoutes } from './infra.js';
import { kycRoutes } from './kyc.js';
import { paymentsRoutes } from './payments.js';
import { playgroundRoutes } from './playground.js';
import { rewardsRoutes } from './rewards.js';
import type { RouteSpec } from './route.js';
import { sportsRoutes } from './sports.js';
import { userRoutes } from './user.js';
import { validationRoutes } from './validation.js';
import { walletRoutes } from './wallet.js';

/** The route tables, one per table of spec part 4. */
export const allRouteTables: readonly (readonly RouteSpec[])[] = [
  authRoutes,
  validationRoutes,
  userRoutes,
  walletRoutes,
  paymentsRoutes,
  gamesRoutes,
  sportsRoutes,
  kycRoutes,
  rewardsRoutes,
  incomeReportRoutes,
  albumRoutes,
  externalRoutes,
  infraRoutes,
  devRoutes,
  playgroundRoutes,
];
