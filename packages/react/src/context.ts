/**
 * The context the provider gives its hooks.
 *
 * @module
 */
import type { ProxyClient, SessionSnapshot } from '@front-proxy/browser';
import { createContext } from 'react';
import type { ProfileStore } from './profile-store.js';

/** A forced logout the page has not dismissed yet: what to tell the user, once. */
export interface ForcedLogoutNotice {
  /** The reference of the failed call, e.g. `'EP0702-EM0003'` (show it as `#EP0702-EM0003`). */
  readonly ref: string;
  /** The user-facing message of the failure in the client's locale. */
  readonly message: string;
  /** When it happened, epoch milliseconds. */
  readonly at: number;
  /**
   * `this-tab`: this tab ran it (beacon, logout call); `other-tab`: another tab of the browser did,
   * and this one, signed in until then, only tells its user.
   */
  readonly cause: 'this-tab' | 'other-tab';
}

/** What the provider shares. */
export interface ProxySessionContextValue {
  readonly client: ProxyClient;
  /** The state the server rendered with (`initialSession`), else `unknown`. */
  readonly serverSession: SessionSnapshot;
  readonly profiles: ProfileStore;
  readonly notice: ForcedLogoutNotice | null;
  readonly dismiss: () => void;
}

/** The provider's context; `null` outside a provider. */
export const ProxySessionContext = createContext<ProxySessionContextValue | null>(null);
