/**
 * The root package's `./browser` subpath (docs/behaviour.md "Public modules"): a re-export of the
 * browser SDK package `@front-proxy/browser` (docs/architecture.md "Habits" (habit 17)), kept so that
 * `import … from 'front-proxy/browser'` goes on working. A front end installs
 * `@front-proxy/browser` alone (see docs/browser-sdk.md).
 *
 * @module
 */

export * from '@front-proxy/browser';
