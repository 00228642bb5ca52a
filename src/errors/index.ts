/**
 * The error-reference module of spec part 7 as the server imports it, and the root package's
 * `./errors` subpath (docs/behaviour.md "Public modules"): a re-export of `@front-proxy/browser/errors`,
 * the one source of the EP and EM registries, the classifier and the reference-code helpers
 * (the browser package, docs/architecture.md "Habits" (habit 17)).
 *
 * @example
 * import { classifyError, explainRef } from 'front-proxy/errors';
 * const { ref } = classifyError({ status: 401, data: { reason: 'token_expired' }, url: '/auth/user-profile' });
 * // ref === 'EP0003-EM0003'
 *
 * @module
 */

export * from '@front-proxy/browser/errors';
