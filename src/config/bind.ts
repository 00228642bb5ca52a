/**
 * Whether `HOST` can be bound: asynchronous, so apart from {@link loadConfig}'s checks of form.
 *
 * @module
 */
import { createServer as createNetServer } from 'node:net';
import { quoted } from './problems.js';

/**
 * Whether this machine can listen on `host` (docs/behaviour.md "Configuration": `HOST` must be an address
 * this machine can bind): binds a throwaway server to `host` on a free port, then closes it. A host
 * name is resolved first, as `listen` does. Called by the process entry point before the app is built;
 * {@link loadConfig} stays synchronous and only checks the form of `HOST`.
 *
 * @param host - the listen address, as {@link Config.host} holds it.
 * @returns `undefined` when the bind succeeds, else the one error line
 *   `HOST: cannot bind "<host>": <reason>`. Never rejects.
 */
export function checkHostBindable(host: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    const probe = createNetServer();
    probe.once('error', (error: Error) => resolve(`HOST: cannot bind ${quoted(host)}: ${error.message}`));
    probe.listen({ port: 0, host, exclusive: true }, () => probe.close(() => resolve(undefined)));
  });
}
