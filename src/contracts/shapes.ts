/**
 * The response shapes of spec part 2 (2.2-2.6), declared once in the browser package
 * (`@front-proxy/browser/shapes`, types only) for the server contracts (`contracts/auth.ts`,
 * `contracts/answers.ts`), the sandbox (`sandbox/types.ts`) and the browser SDK.
 *
 * @example
 * import type { AuthUser, ProfileResponse } from '../contracts/shapes.js';
 *
 * @module
 */

export type * from '@front-proxy/browser/shapes';
