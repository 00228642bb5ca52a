/**
 * Every route table of spec part 4, in the specification's order. A table is added here once; the
 * app registers them all, the contract tests walk them.
 *
 * @module
 */
import { authRoutes } from './auth.js';
import { incomeReportRoutes } from './income-report.js';
import { kycRoutes } from './kyc.js';
import { paymentsRoutes } from './payments.js';
import { rewardsRoutes } from './rewards.js';
import type { RouteSpec } from './route.js';
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
  kycRoutes,
  rewardsRoutes,
  incomeReportRoutes,
];
