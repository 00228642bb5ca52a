/**
 * The areas of the proxy's API, in the specification's order, with the spec section each covers: one
 * per route table (`routes/index.ts`), plus the development-only routes. The tags of the OpenAPI
 * document (`pipeline/openapi.ts`) and the sections of docs/api-reference.md.
 *
 * @module
 */

/** The areas, in the specification's order. */
export const API_AREAS = [
  {
    name: 'Authentication',
    description:
      'spec 4.1: login, registration, logout, session refresh, password recovery, social login, document validation, the forced-logout beacon (spec 6).',
  },
  { name: 'Validation', description: 'spec 4.2: e-mail, SMS, documents, address and terms of the user, postal-code lookup.' },
  { name: 'User', description: 'spec 4.3: profile, preferences, responsible-gaming limits, login history, referrals.' },
  {
    name: 'Wallet',
    description: 'spec 4.4: wallet and rollover, transactions, bonus and cashback transfers, withdrawal receipt. Amounts in cents.',
  },
  {
    name: 'Payments',
    description:
      'spec 4.5, 2.7, 2.8: providers, deposit, withdraw, bank data, PIX key. Amounts in cents; deposit and withdraw are money moves (exactly once).',
  },
  { name: 'Games', description: 'spec 4.6: casino catalogue (cached), search, game start, votes, statistics, favourites.' },
  { name: 'Sports', description: 'spec 4.7: sportsbook search and launch, partner tokens, raw sportsbook passthrough.' },
  { name: 'KYC', description: 'spec 4.8: identity verification start and status.' },
  { name: 'Rewards', description: 'spec 4.8: rewards list and redemption.' },
  { name: 'Income report', description: 'spec 4.8: yearly income report (Brazil).' },
  { name: 'Sticker album', description: 'spec 4.9: the sticker-album campaign, on its own API (a handshake before each call).' },
  { name: 'External services', description: 'spec 4.10: first-deposit cashback and attribution, external function endpoints.' },
  {
    name: 'Infrastructure',
    description: 'spec 4.10, 9: build id, browser cache clear, operator cache purge; health and readiness probes.',
  },
  { name: 'Development', description: 'spec 1.6: development-only routes, absent in production (404).' },
] as const satisfies readonly { readonly name: string; readonly description: string }[];

/** The name of an area of {@link API_AREAS}. */
export type ApiArea = (typeof API_AREAS)[number]['name'];
