/**
 * Casino endpoints of the sandbox BFF (spec 4.6 "Upstream" column and the catalogue assembly
 * endpoints): a deterministic catalogue of {@link GAME_COUNT} games over {@link CATEGORIES} and
 * {@link PROVIDERS}, with paging, search, statistics, wins, votes and favourites per user, and game
 * start.
 *
 * | endpoint | answer |
 * |---|---|
 * | `GET /casino-games/list/` (and without the slash), `/casino-games/filter` | `{ data, current_page, per_page, total, last_page }`; query `categories[]`, `providers[]`, `search`, `page`, `per_page` (default 24, at most 100) |
 * | `GET /casino-games/list/base` | `{ categories, providers, total }` |
 * | `GET /casino-games/home` | `{ sections: [{ slug, title, games }] }`, twelve games per category |
 * | `GET /casino-games/page/{page}` | the whole catalogue, {@link CATALOGUE_PAGE_SIZE} games a page, same shape as the list |
 * | `GET /casino-games?slug=` | `{ data: game }`, 404 `game_not_found` |
 * | `GET /bff/games/top-wins-dl`, `/last-wins`, `/game-high-payers-dl`, `/top-wins-game-dl/{slug}` | `{ data: [{ game, amount, currency, player, won_at }] }` (amounts in cents) |
 * | `GET /bff/games/statistics-dl?slug=` (or `/statistics-dl/{slug}`), `/statistics-by-period-dl/{slug}` | `{ data: { slug, rtp, volatility, plays_24h, biggest_win, hit_rate } }` |
 * | `GET /casino-game-votes?casinoGameId=` (session) | `{ data: { casinoGameId, up, down, userVote } }` |
 * | `POST /casino-game-votes/store/` (session) | body `{ casinoGameId, vote: "up" \| "down" }` → same shape |
 * | `DELETE /casino-game-votes/destroy/{gameId}` (session) | removes the user's vote → same shape |
 * | `GET /bff/games/game-vote/{slug}`, `/game-vote-count/{slug}` | the vote counts of a game |
 * | `GET /bff/favorite-games` (session) | `{ data: games }` |
 * | `PUT /bff/favorite-games/toggle` (session) | body `{ casinoGameId }` or `{ slug }` → `{ favorite, data }` |
 * | `GET /start-game-v2?slug=\|gameId=&mode=` (session) | `{ url, game, mode, session_id }` plus `debug` and `trace_id` fields, as some BFFs send, which the proxy must remove |
 *
 * @module
 */
import type { FastifyReply } from 'fastify';
import type { SandboxArea } from '../context.js';
import { asRecord, sendError } from '../http.js';
import { defineAreaState, defineUserState } from '../store.js';
import { withUser } from './guard.js';

/** Number of games in the sandbox catalogue. */
export const GAME_COUNT = 540;
/** Games per `/casino-games/page/{page}`. */
export const CATALOGUE_PAGE_SIZE = 100;

/** Category slugs and titles. */
export const CATEGORIES: readonly { slug: string; name: string }[] = Object.freeze([
  { slug: 'slots', name: 'Slots' },
  { slug: 'live-casino', name: 'Live casino' },
  { slug: 'table-games', name: 'Table games' },
  { slug: 'crash', name: 'Crash' },
  { slug: 'instant-win', name: 'Instant win' },
  { slug: 'jackpots', name: 'Jackpots' },
  { slug: 'fishing', name: 'Fishing' },
  { slug: 'bingo', name: 'Bingo' },
]);

/** Provider slugs and names (fictional studios). */
export const PROVIDERS: readonly { slug: string; name: string }[] = Object.freeze(
  [
    'Aurora Studios',
    'Blue Ox Gaming',
    'Cobalt Reels',
    'Dune Interactive',
    'Ember Play',
    'Fjord Games',
    'Granite Labs',
    'Harbor Live',
    'Iris Entertainment',
    'Juniper Gaming',
    'Kestrel Studio',
    'Lumen Tables',
  ].map((name) => ({ slug: name.toLowerCase().replace(/\s+/g, '-'), name })),
);

const ADJECTIVES = [
  'Golden',
  'Wild',
  'Lucky',
  'Mystic',
  'Royal',
  'Frozen',
  'Blazing',
  'Hidden',
  'Cosmic',
  'Ancient',
  'Crystal',
  'Thunder',
  'Silver',
  'Jungle',
  'Neon',
  'Pirate',
  'Dragon',
  'Sunset',
];
const NOUNS = [
  'Fortune',
  'Treasure',
  'Reels',
  'Gems',
  'Riches',
  'Temple',
  'Express',
  'Safari',
  'Kingdom',
  'Spins',
  'Vault',
  'Legends',
  'Nights',
  'Fruits',
  'Wolves',
  'Pyramids',
  'Rockets',
  'Pearls',
  'Harvest',
  'Quest',
  'Carnival',
  'Orchard',
  'Voyage',
  'Bounty',
  'Empire',
  'Galaxy',
  'Meadow',
  'Tides',
  'Falls',
  'Crown',
];

/** A sandbox game record (spec 2.8 leaves game fields open; these are the sandbox's choice). */
export interface SandboxGame {
  id: number;
  slug: string;
  name: string;
  provider: { slug: string; name: string };
  categories: string[];
  image: string;
  /** Return to player, percent. */
  rtp: number;
  volatility: 'low' | 'medium' | 'high';
  has_demo: boolean;
  is_new: boolean;
  /** Smallest bet, in cents. */
  min_bet: number;
}

/** A small deterministic pseudo-random generator (mulberry32). */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Builds the catalogue; the same every time. */
export function buildCatalogue(count = GAME_COUNT): SandboxGame[] {
  const random = prng(20260101);
  const games: SandboxGame[] = [];
  const used = new Set<string>();
  for (let i = 0; i < count; i++) {
    const adjective = ADJECTIVES[i % ADJECTIVES.length] as string;
    const noun = NOUNS[Math.floor(i / ADJECTIVES.length) % NOUNS.length] as string;
    let name = `${adjective} ${noun}`;
    if (used.has(name)) name = `${name} ${Math.floor(i / (ADJECTIVES.length * NOUNS.length)) + 2}`;
    used.add(name);
    const slug = name.toLowerCase().replace(/\s+/g, '-');
    const provider = PROVIDERS[Math.floor(random() * PROVIDERS.length)] as { slug: string; name: string };
    const main = CATEGORIES[i % CATEGORIES.length] as { slug: string; name: string };
    const categories = [main.slug];
    if (random() < 0.15) {
      const extra = CATEGORIES[Math.floor(random() * CATEGORIES.length)] as { slug: string };
      if (extra.slug !== main.slug) categories.push(extra.slug);
    }
    games.push({
      id: 10_001 + i,
      slug,
      name,
      provider,
      categories,
      image: `/images/games/${slug}.webp`,
      rtp: Math.round((94 + random() * 3.5) * 100) / 100,
      volatility: (['low', 'medium', 'high'] as const)[Math.floor(random() * 3)] ?? 'medium',
      has_demo: random() < 0.8,
      is_new: i >= count - 30,
      min_bet: [10, 20, 50, 100][Math.floor(random() * 4)] ?? 10,
    });
  }
  return games;
}

interface CatalogueState {
  games: SandboxGame[];
  bySlug: Map<string, SandboxGame>;
  byId: Map<number, SandboxGame>;
  /** Votes by game id: user id → vote. */
  votes: Map<number, Map<number, 'up' | 'down'>>;
}

const catalogueState = defineAreaState<CatalogueState>('games', () => {
  const games = buildCatalogue();
  return {
    games,
    bySlug: new Map(games.map((g) => [g.slug, g])),
    byId: new Map(games.map((g) => [g.id, g])),
    votes: new Map(),
  };
});

/** Favourite game ids of a user, in the order they were added. */
const favoritesState = defineUserState('games.favorites', () => ({ ids: [] as number[] }));

function many(value: unknown): string[] {
  if (value === undefined) return [];
  return (Array.isArray(value) ? value : [value]).filter((v): v is string => typeof v === 'string' && v !== '');
}

function positive(value: unknown, fallback: number, max: number): number {
  const n = typeof value === 'string' ? Number(value) : typeof value === 'number' ? value : Number.NaN;
  return Number.isInteger(n) && n >= 1 ? Math.min(n, max) : fallback;
}

function paginate(all: readonly SandboxGame[], page: number, perPage: number) {
  const last = Math.max(1, Math.ceil(all.length / perPage));
  return {
    data: all.slice((page - 1) * perPage, page * perPage),
    current_page: page,
    per_page: perPage,
    total: all.length,
    last_page: last,
  };
}

/** Deterministic statistics of a game. */
export function gameStatistics(game: SandboxGame) {
  const random = prng(game.id * 7919);
  return {
    slug: game.slug,
    rtp: game.rtp,
    volatility: game.volatility,
    plays_24h: Math.floor(random() * 50_000),
    biggest_win: Math.floor(random() * 5_000_000),
    hit_rate: Math.round(random() * 4000) / 100,
  };
}

function wins(games: readonly SandboxGame[], seed: number, count: number) {
  const random = prng(seed);
  const day = new Date().toISOString().slice(0, 10);
  return Array.from({ length: count }, (_, i) => {
    const game = games[Math.floor(random() * games.length)] as SandboxGame;
    return {
      game: { id: game.id, slug: game.slug, name: game.name, image: game.image, provider: game.provider },
      amount: Math.floor(random() * 2_000_000) + 1_000,
      currency: 'BRL',
      player: `pl***${Math.floor(random() * 90) + 10}`,
      won_at: `${day}T${String(23 - (i % 24)).padStart(2, '0')}:00:00Z`,
    };
  });
}

function voteView(state: CatalogueState, gameId: number, userId: number) {
  const votes = state.votes.get(gameId) ?? new Map<number, 'up' | 'down'>();
  let up = 0;
  let down = 0;
  for (const v of votes.values()) {
    if (v === 'up') up++;
    else down++;
  }
  return { casinoGameId: gameId, up, down, userVote: votes.get(userId) ?? null };
}

function notFound(reply: FastifyReply): FastifyReply {
  return sendError(reply, 404, 'game_not_found', 'Game not found');
}

/** The casino area of the sandbox BFF. */
export const gamesArea: SandboxArea = {
  name: 'games',
  register(app, ctx) {
    const state = () => ctx.store.areaState(catalogueState);

    const list = async (request: { query: unknown }) => {
      const query = asRecord(request.query);
      const categories = many(query['categories[]']).concat(many(query.categories));
      const providers = many(query['providers[]']).concat(many(query.providers));
      const search = typeof query.search === 'string' ? query.search.trim().toLowerCase() : '';
      const games = state().games.filter(
        (g) =>
          (categories.length === 0 || g.categories.some((c) => categories.includes(c))) &&
          (providers.length === 0 || providers.includes(g.provider.slug)) &&
          (search === '' || g.name.toLowerCase().includes(search) || g.slug.includes(search)),
      );
      return paginate(games, positive(query.page, 1, 100_000), positive(query.per_page, 24, 100));
    };
    app.get('/casino-games/list/', list);
    app.get('/casino-games/list', list);
    app.get('/casino-games/filter', list);

    app.get('/casino-games/list/base', async () => ({
      categories: CATEGORIES.map((c) => ({ ...c, total: state().games.filter((g) => g.categories.includes(c.slug)).length })),
      providers: PROVIDERS,
      total: state().games.length,
    }));

    app.get('/casino-games/home', async () => ({
      sections: CATEGORIES.map((c) => ({
        slug: c.slug,
        title: c.name,
        games: state()
          .games.filter((g) => g.categories.includes(c.slug))
          .slice(0, 12),
      })),
    }));

    app.get<{ Params: { page: string } }>('/casino-games/page/:page', async (request, reply) => {
      const page = Number(request.params.page);
      if (!Number.isInteger(page) || page < 1) return sendError(reply, 404, 'page_not_found', 'Page not found');
      const answer = paginate(state().games, page, CATALOGUE_PAGE_SIZE);
      if (page > answer.last_page) return sendError(reply, 404, 'page_not_found', 'Page not found');
      return answer;
    });

    app.get('/casino-games', async (request, reply) => {
      const query = asRecord(request.query);
      const game = typeof query.slug === 'string' ? state().bySlug.get(query.slug) : undefined;
      return game ? { data: game } : notFound(reply);
    });

    app.get('/bff/games/top-wins-dl', async () => ({ data: wins(state().games, 11, 20) }));
    app.get('/bff/games/last-wins', async () => ({ data: wins(state().games, 23, 30) }));
    app.get('/bff/games/game-high-payers-dl', async () => ({ data: wins(state().games, 37, 15) }));
    app.get<{ Params: { slug: string } }>('/bff/games/top-wins-game-dl/:slug', async (request, reply) => {
      const game = state().bySlug.get(request.params.slug);
      return game ? { data: wins([game], game.id, 10) } : notFound(reply);
    });

    const statistics = (slug: unknown, reply: FastifyReply) => {
      const game = typeof slug === 'string' ? state().bySlug.get(slug) : undefined;
      return game ? { data: gameStatistics(game) } : notFound(reply);
    };
    app.get('/bff/games/statistics-dl', async (request, reply) => statistics(asRecord(request.query).slug, reply));
    app.get<{ Params: { slug: string } }>('/bff/games/statistics-dl/:slug', async (request, reply) =>
      statistics(request.params.slug, reply),
    );
    app.get<{ Params: { slug: string } }>('/bff/games/statistics-by-period-dl/:slug', async (request, reply) =>
      statistics(request.params.slug, reply),
    );
    app.get<{ Params: { slug: string } }>('/bff/games/game-vote/:slug', async (request, reply) => {
      const game = state().bySlug.get(request.params.slug);
      return game ? { data: voteView(state(), game.id, 0) } : notFound(reply);
    });
    app.get<{ Params: { slug: string } }>('/bff/games/game-vote-count/:slug', async (request, reply) => {
      const game = state().bySlug.get(request.params.slug);
      if (!game) return notFound(reply);
      const { up, down } = voteView(state(), game.id, 0);
      return { data: { up, down, total: up + down } };
    });

    app.get(
      '/casino-game-votes',
      withUser(async (request, reply, user) => {
        const id = Number(asRecord(request.query).casinoGameId);
        if (!state().byId.has(id)) return notFound(reply);
        return { data: voteView(state(), id, user.id) };
      }),
    );
    app.post(
      '/casino-game-votes/store/',
      withUser(async (request, reply, user) => {
        const body = asRecord(request.body);
        const id = Number(body.casinoGameId);
        if (body.vote !== 'up' && body.vote !== 'down') {
          return sendError(reply, 422, 'validation_error', 'The vote field must be up or down.');
        }
        if (!state().byId.has(id)) return notFound(reply);
        let votes = state().votes.get(id);
        if (!votes) {
          votes = new Map();
          state().votes.set(id, votes);
        }
        votes.set(user.id, body.vote);
        return { data: voteView(state(), id, user.id) };
      }),
    );
    app.delete<{ Params: { gameId: string } }>(
      '/casino-game-votes/destroy/:gameId',
      withUser(async (request, reply, user) => {
        const id = Number((request.params as { gameId: string }).gameId);
        if (!state().byId.has(id)) return notFound(reply);
        state().votes.get(id)?.delete(user.id);
        return { data: voteView(state(), id, user.id) };
      }),
    );

    app.get(
      '/bff/favorite-games',
      withUser(async (_request, _reply, user) => {
        const { ids } = ctx.store.userState(favoritesState, user);
        return { data: ids.map((id) => state().byId.get(id)).filter((g) => g !== undefined) };
      }),
    );
    app.put(
      '/bff/favorite-games/toggle',
      withUser(async (request, reply, user) => {
        const body = asRecord(request.body);
        const game =
          body.casinoGameId !== undefined
            ? state().byId.get(Number(body.casinoGameId))
            : typeof body.slug === 'string'
              ? state().bySlug.get(body.slug)
              : undefined;
        if (!game) return notFound(reply);
        const favorites = ctx.store.userState(favoritesState, user);
        const at = favorites.ids.indexOf(game.id);
        if (at >= 0) favorites.ids.splice(at, 1);
        else favorites.ids.push(game.id);
        return {
          favorite: at < 0,
          data: favorites.ids.map((id) => state().byId.get(id)).filter((g) => g !== undefined),
        };
      }),
    );

    app.get(
      '/start-game-v2',
      withUser(async (request, reply, user, session) => {
        const query = asRecord(request.query);
        const game =
          typeof query.slug === 'string'
            ? state().bySlug.get(query.slug)
            : query.gameId !== undefined
              ? state().byId.get(Number(query.gameId))
              : undefined;
        if (!game) return notFound(reply);
        const mode = query.mode === 'demo' ? 'demo' : 'real';
        if (mode === 'demo' && !game.has_demo) return sendError(reply, 422, 'demo_unavailable', 'This game has no demo mode');
        const launch = `${session.id.slice(0, 8)}${game.id}`;
        return {
          url: `https://games.sandbox.invalid/launch/${game.slug}?session=${launch}&mode=${mode}`,
          game: { id: game.id, slug: game.slug, name: game.name, provider: game.provider },
          mode,
          session_id: launch,
          // What a careless BFF may add; the proxy removes these (spec 1.6).
          debug: { provider_request: { operator_secret: 'sandbox-operator-secret', user_id: user.id }, sql: 'select 1' },
          trace_id: `trace-${launch}`,
          internal: { node: 'bff-sandbox-1' },
        };
      }),
    );
  },
};
