/**
 * `brandService`: the other BFF endpoints of the registry (spec 4.11), typed. No proxy route of the
 * specification calls them; they are here for server-side use (a page that needs the brand's
 * appearance or features, the dev forwarder) and are tested against the sandbox.
 *
 * The specification gives no shapes for these answers; the types below name the fields the sandbox
 * serves and keep every other field (`[key: string]: unknown`). Each function answers the raw
 * {@link Typed} response (any status) so that callers can apply the envelope; read a 2xx body with
 * `readJson`. Transport failures reject with `UpstreamError`.
 *
 * | function | upstream | EP |
 * |---|---|---|
 * | `appearance()` | `GET /appearance` | EP0200 |
 * | `features()` | `GET /bff/features` | EP0201 |
 * | `bookmakerSettings(payload)` | `POST /bookmaker-settings` | EP0202 |
 * | `legalTerm(query?)` | `GET /getlegalterm` | EP0203 |
 * | `addressByUser()` (session) | `GET /bff/users/address-by-user` | EP0021 |
 * | `accountSocial()` (session) | `GET /bff/users/account-social` | EP0031 |
 * | `linkAccountSocial(payload)` (session) | `POST /bff/users/account-social` | EP0031 |
 * | `unlinkAccountSocial(provider)` (session) | `DELETE /bff/users/account-social?provider=` | EP0031 |
 *
 * @example
 * const brand = brandService((req) => ctx.call('bff', req));
 * const features = readJson(await brand.features());
 *
 * @module
 */
import type { BffCaller, Typed } from './auth-service.js';

/** `GET /appearance`: the brand's look. Colours are CSS colour strings; URLs are absolute or site-relative. */
export interface Appearance {
  brand?: string;
  theme?: 'light' | 'dark' | string;
  colors?: Record<string, string>;
  logo?: string;
  favicon?: string;
  [key: string]: unknown;
}

/** `GET /bff/features`: feature flags by name. */
export interface Features {
  features?: Record<string, boolean>;
  [key: string]: unknown;
}

/** `POST /bookmaker-settings` request: which settings to read (all when empty). */
export interface BookmakerSettingsPayload {
  keys?: string[];
  country?: string;
  [key: string]: unknown;
}

/** `POST /bookmaker-settings` answer: settings by key. */
export interface BookmakerSettings {
  settings?: Record<string, unknown>;
  [key: string]: unknown;
}

/** `GET /getlegalterm` query: the term's type (`terms`, `privacy`…) and language. */
export interface LegalTermQuery {
  type?: string;
  lang?: string;
}

/** `GET /getlegalterm` answer. `updated_at` is ISO 8601; `content` is HTML. */
export interface LegalTerm {
  type?: string;
  version?: string;
  title?: string;
  content?: string;
  updated_at?: string;
  [key: string]: unknown;
}

/** `GET /bff/users/address-by-user`: the user's address (fields chosen by the sandbox). */
export interface UserAddress {
  zip_code?: string;
  street?: string;
  number?: string;
  complement?: string | null;
  neighborhood?: string;
  city?: string;
  state?: string;
  country?: string;
  [key: string]: unknown;
}

/** One social account linked to the user. `linked_at` is ISO 8601. */
export interface SocialAccount {
  provider: string;
  email?: string | null;
  linked_at?: string;
  [key: string]: unknown;
}

/** `GET/POST/DELETE /bff/users/account-social` answer. */
export interface SocialAccounts {
  data?: SocialAccount[];
  [key: string]: unknown;
}

/** `POST /bff/users/account-social` request: the provider and its token. */
export interface LinkSocialPayload {
  provider: string;
  token: string;
}

/** The brand / platform service of spec 4.11 (see the module table). */
export function brandService(call: BffCaller) {
  return {
    appearance: (): Promise<Typed<Appearance>> => call({ method: 'GET', path: '/appearance' }),
    features: (): Promise<Typed<Features>> => call({ method: 'GET', path: '/bff/features' }),
    bookmakerSettings: (payload: BookmakerSettingsPayload = {}): Promise<Typed<BookmakerSettings>> =>
      call({ method: 'POST', path: '/bookmaker-settings', json: payload }),
    legalTerm: (query: LegalTermQuery = {}): Promise<Typed<LegalTerm>> =>
      call({ method: 'GET', path: '/getlegalterm', query: { type: query.type, lang: query.lang } }),
    addressByUser: (): Promise<Typed<UserAddress>> => call({ method: 'GET', path: '/bff/users/address-by-user' }),
    accountSocial: (): Promise<Typed<SocialAccounts>> => call({ method: 'GET', path: '/bff/users/account-social' }),
    linkAccountSocial: (payload: LinkSocialPayload): Promise<Typed<SocialAccounts>> =>
      call({ method: 'POST', path: '/bff/users/account-social', json: payload }),
    unlinkAccountSocial: (provider: string): Promise<Typed<SocialAccounts>> =>
      call({ method: 'DELETE', path: '/bff/users/account-social', query: { provider } }),
  };
}
export type BrandService = ReturnType<typeof brandService>;
