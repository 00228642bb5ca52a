/**
 * Brand / platform endpoints of the sandbox BFF (spec 4.11; shapes in `src/upstream/brand-service.ts`).
 *
 * | endpoint | answer |
 * |---|---|
 * | `GET /appearance` | `{ brand, theme, colors, logo, favicon }` |
 * | `GET /bff/features` | `{ features: { <flag>: boolean } }` |
 * | `POST /bookmaker-settings` | body `{ keys? }` → `{ settings }` (only the keys asked, all without `keys`) |
 * | `GET /getlegalterm?type=&lang=` | `{ type, version, title, content, updated_at }`; types `terms`, `privacy`, `responsible-gaming`; 404 `term_not_found` |
 * | `GET /bff/users/address-by-user` (session) | the user's address |
 * | `GET /bff/users/account-social` (session) | `{ data: [{ provider, email, linked_at }] }` |
 * | `POST /bff/users/account-social` (session) | body `{ provider, token }` → the list; 422 for an unknown provider or a blank token, 409 `already_linked` |
 * | `DELETE /bff/users/account-social?provider=` (session) | the list without it; 404 `not_linked` |
 *
 * @module
 */
import type { SandboxArea } from '../context.js';
import { asRecord, checkFields, sendError, sendValidationError } from '../http.js';
import { defineUserState } from '../store.js';
import { SOCIAL_PROVIDERS } from './auth.js';
import { withUser } from './guard.js';

const SETTINGS: Readonly<Record<string, unknown>> = Object.freeze({
  currency: 'BRL',
  min_deposit: 1_000,
  max_deposit: 5_000_000,
  min_withdraw: 2_000,
  sportsbook_enabled: true,
  casino_enabled: true,
  support_email: 'support@sandbox.invalid',
});

const TERMS: Readonly<Record<string, string>> = Object.freeze({
  terms: 'Terms and conditions',
  privacy: 'Privacy policy',
  'responsible-gaming': 'Responsible gaming',
});

const socialState = defineUserState('brand.social', () => ({
  accounts: [] as { provider: string; email: string | null; linked_at: string }[],
}));

/** The brand area of the sandbox BFF. */
export const brandArea: SandboxArea = {
  name: 'brand',
  register(app, ctx) {
    app.get('/appearance', async () => ({
      brand: 'Sandbox Bet',
      theme: 'dark',
      colors: { primary: '#1f8a70', secondary: '#ffb400', background: '#101418', text: '#f5f7fa' },
      logo: '/brand/logo.svg',
      favicon: '/brand/favicon.ico',
    }));

    app.get('/bff/features', async () => ({
      features: { sportsbook: true, sticker_album: true, ftd_cashback: true, two_factor: true, unified_search: true },
    }));

    app.post('/bookmaker-settings', async (request) => {
      const keys = asRecord(request.body).keys;
      if (!Array.isArray(keys) || keys.length === 0) return { settings: SETTINGS };
      return { settings: Object.fromEntries(keys.filter((k) => typeof k === 'string' && k in SETTINGS).map((k) => [k, SETTINGS[k]])) };
    });

    app.get('/getlegalterm', async (request, reply) => {
      const query = asRecord(request.query);
      const type = typeof query.type === 'string' ? query.type : 'terms';
      const title = TERMS[type];
      if (!title) return sendError(reply, 404, 'term_not_found', 'Legal term not found');
      return {
        type,
        version: '2026.1',
        title,
        content: `<h1>${title}</h1><p>Sandbox text (${typeof query.lang === 'string' ? query.lang : 'pt-BR'}).</p>`,
        updated_at: '2026-01-01T00:00:00Z',
      };
    });

    app.get(
      '/bff/users/address-by-user',
      withUser(async (_request, _reply, user) => ({
        zip_code: '01310-100',
        street: 'Avenida Paulista',
        number: String(1000 + (user.id % 900)),
        complement: null,
        neighborhood: 'Bela Vista',
        city: 'São Paulo',
        state: 'SP',
        country: user.profile.country,
      })),
    );

    app.get(
      '/bff/users/account-social',
      withUser(async (_request, _reply, user) => ({ data: ctx.store.userState(socialState, user).accounts })),
    );
    app.post(
      '/bff/users/account-social',
      withUser(async (request, reply, user) => {
        const checked = checkFields(request.body, { provider: 'string', token: 'string' });
        if (!checked.ok) return sendValidationError(reply, checked.errors);
        const { provider } = checked.value;
        if (!SOCIAL_PROVIDERS.includes(provider)) return sendValidationError(reply, { provider: ['Unknown provider.'] });
        const state = ctx.store.userState(socialState, user);
        if (state.accounts.some((a) => a.provider === provider)) {
          return sendError(reply, 409, 'already_linked', 'This provider is already linked');
        }
        state.accounts.push({ provider, email: user.profile.email, linked_at: new Date(ctx.store.now()).toISOString() });
        return { data: state.accounts };
      }),
    );
    app.delete(
      '/bff/users/account-social',
      withUser(async (request, reply, user) => {
        const provider = asRecord(request.query).provider;
        const state = ctx.store.userState(socialState, user);
        const at = state.accounts.findIndex((a) => a.provider === provider);
        if (at < 0) return sendError(reply, 404, 'not_linked', 'This provider is not linked');
        state.accounts.splice(at, 1);
        return { data: state.accounts };
      }),
    );
  },
};
