/**
 * The internal proxy routes of the EP registry (spec 7.2, EP0700-EP0799): the codes of a failure
 * the proxy raises on one of its own `/api/*` routes; and the unrecognised URL's code EP0000. `ENDPOINT_CODES` (endpoint-codes.ts) spreads
 * these rows at their place in the order, after every BFF row; the browser SDK, whose calls all go
 * to `/api/*`, classifies them on these rows alone (`classifyProxyError`), so a page bundles these
 * rows and not the BFF's 104. No BFF row's pattern starts with `/api/` or with a parameter, so on an
 * `/api/*` URL these rows give what the whole registry gives (test/errors/classify.test.ts checks
 * it for every route of the client).
 *
 * Codes are append-only (spec 7.1), as in endpoint-codes.ts: see `docs/adding-error-codes.md`.
 *
 * Isomorphic: no Node built-ins, no imports outside `src/errors`.
 *
 * @module
 */

import type { EndpointCode, EndpointRow } from './endpoint-codes.js';

/** The internal proxy routes (spec 7.2 EP0700-EP0799), keyed by code, in the matching order; EP0799 last. */
export const PROXY_ENDPOINT_CODES = {
  EP0700: { methods: ['POST'], path: '/api/auth/login', meaning: 'proxy: login' },
  EP0701: { methods: ['POST'], path: '/api/auth/logout', meaning: 'proxy: logout' },
  EP0702: { methods: ['GET'], path: '/api/auth/profile', meaning: 'proxy: profile' },
  EP0703: { methods: ['POST'], path: '/api/auth/register', meaning: 'proxy: registration' },
  EP0704: { methods: ['POST'], path: '/api/auth/refresh', meaning: 'proxy: token refresh' },
  EP0705: { methods: ['POST'], path: '/api/auth/recovery', meaning: 'proxy: password recovery' },
  EP0706: { methods: 'any', path: '/api/auth/social/{provider}', meaning: 'proxy: social login' },
  EP0707: { methods: ['POST'], path: '/api/auth/validate-document', meaning: 'proxy: document validation' },
  EP0710: { methods: 'any', path: '/api/wallet/*', meaning: 'proxy: wallet routes' },
  EP0711: { methods: 'any', path: '/api/payments/*', meaning: 'proxy: payment routes' },
  EP0712: { methods: 'any', path: '/api/user/*', meaning: 'proxy: user routes' },
  EP0713: { methods: 'any', path: '/api/kyc/*', meaning: 'proxy: KYC routes' },
  EP0714: { methods: 'any', path: '/api/rewards/*', meaning: 'proxy: rewards routes' },
  EP0715: { methods: 'any', path: '/api/validation/*', meaning: 'proxy: validation routes' },
  EP0716: { methods: 'any', path: '/api/sports/*', meaning: 'proxy: sports routes' },
  EP0717: { methods: 'any', path: '/api/games/*', meaning: 'proxy: game routes' },
  EP0718: { methods: 'any', path: '/api/favorites', meaning: 'proxy: favourites' },
  EP0719: { methods: 'any', path: '/api/income-report/*', meaning: 'proxy: income report routes' },
  EP0720: { methods: ['POST'], path: '/api/logs/auth-logout', meaning: 'proxy: forced-logout log' },
  EP0721: { methods: ['POST'], path: '/api/auth/recheck-spa', meaning: 'proxy: session recheck' },
  EP0799: { methods: 'any', path: '/api/*', meaning: 'proxy: any other /api route (fallback)' },
} as const satisfies Readonly<Record<`EP07${number}`, EndpointRow>>;

/** The code of an unrecognised URL (spec 7.2): `'EP0000'`. */
export const UNKNOWN_ENDPOINT_CODE = 'EP0000' satisfies EndpointCode;

/** The code of an `/api/*` route that no other internal row matches (spec 7.2): `'EP0799'`. */
export const API_FALLBACK_ENDPOINT_CODE = 'EP0799' satisfies EndpointCode;
