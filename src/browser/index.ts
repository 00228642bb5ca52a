/**
 * The root package's `./browser` subpath (CONTRACT.md "Public modules"): a re-export of the
 * browser SDK package `@front-proxy/browser` (DESIGN.md habit 17), kept so that
 * `import … from 'front-proxy/browser'` goes on working. A front end installs
 * `@front-proxy/browser` alone (see docs/browser-sdk.md).
 *
 * @module
 */

export * from '@front-proxy/browser';
