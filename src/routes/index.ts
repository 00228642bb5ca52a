/**
 * Every route table of spec part 4, in the specification's order. A table is added here once; the
 * app registers them all, the contract tests walk them.
 *
 * @module
 */
import { authRoutes } from './auth.js';
import type { RouteSpec } from './route.js';

/** The route tables, one per table of spec part 4. */
export const allRouteTables: readonly (readonly RouteSpec[])[] = [authRoutes];
