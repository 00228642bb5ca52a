/**
 * The browser SDK of the front proxy, the package `@front-proxy/browser` (also the server's
 * `./browser` subpath): everything of `@front-proxy/browser/core` (the typed proxy client, the
 * session state, the refresh cycle and driver, the forced logout, the registry) with the message
 * tables of every locale (pt-BR, en, es): `createProxyClient` here picks among all three by its
 * `locale` option or the browser's languages. A page that wants one table only imports
 * `@front-proxy/browser/core` and `@front-proxy/browser/messages/<locale>` instead.
 *
 * @example
 * import { createProxyClient, startRefreshDriver } from '@front-proxy/browser';
 * const client = createProxyClient({ locale: 'pt-BR', onForcedLogout: (ref) => showLoggedOut(ref) });
 * startRefreshDriver({ client });
 * await client.auth.login({ body: { login, password } });
 *
 * @module
 */
import { ALL_MESSAGES } from './all-messages.js';
import { createProxyClient as createCoreClient, type ProxyClient, type ProxyClientOptions } from './proxy-client.js';

export * from './core.js';
export { ALL_MESSAGES, errorMessage, formErrorMessage, MESSAGES } from './all-messages.js';

/**
 * Creates the proxy client (see `createProxyClient` of `@front-proxy/browser/core`), speaking every
 * table of the SDK unless `messages` says otherwise: the `locale` option, else the browser's
 * languages, else `pt-BR`.
 */
export function createProxyClient(options: ProxyClientOptions = {}): ProxyClient {
  return createCoreClient({ ...options, messages: options.messages ?? ALL_MESSAGES });
}
