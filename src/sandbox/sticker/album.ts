/**
 * The sticker album of the sandbox sticker API (spec 4.9 "Sticker API target" column), per user:
 * one campaign of {@link STICKER_COUNT} stickers on six pages, missions of two types, packs of
 * {@link PACK_SIZE} stickers (a new user has {@link INITIAL_PACKS}), a daily check-in and featured
 * cards. Every route needs a sticker token (see `handshake.ts`).
 *
 * | endpoint | answer |
 * |---|---|
 * | `GET /campaigns/current?missionType=` | the campaign with the missions of the user's type; `missionType` (`casino` or `sportsbook`, else 422) selects the type |
 * | `GET /users/me/progress` | `{ collected, total, percent, packs_available, missions }` |
 * | `GET /users/me/stickers` | `{ data: [{ id, name, rarity, page, count }] }`, owned stickers only |
 * | `GET /users/me/checkin` | `{ daily: { claimed_today, last_claim_day, streak }, completion: { available, claimed } }` |
 * | `POST /users/me/checkin/claim?claimType=daily` | one pack; a second claim the same (UTC) day is 409 `already_claimed_today` |
 * | `POST /users/me/checkin/claim?claimType=completion` | five packs once the album is complete; 422 `album_incomplete`, 409 `already_claimed` |
 * | `POST /users/me/featured/{featuredId}/redeem` | the featured sticker; 404 `featured_not_found`, 409 `already_redeemed` |
 * | `POST /users/me/packs/open` | `{ pack: { id, stickers }, packs_available }`; 409 `no_packs` |
 * | `POST /users/me/packs/open-all` | `{ packs, packs_available: 0 }`; 409 `no_packs` |
 *
 * @module
 */
import type { FastifyReply } from 'fastify';
import { prng } from '../bff/games.js';
import type { SandboxArea } from '../context.js';
import { asRecord, sendError } from '../http.js';
import { defineUserState } from '../store.js';
import { requireStickerUser } from './handshake.js';

/** Stickers in the album. */
export const STICKER_COUNT = 60;
/** Stickers in a pack. */
export const PACK_SIZE = 5;
/** Packs a user starts with. */
export const INITIAL_PACKS = 3;
/** Packs given by the completion check-in. */
export const COMPLETION_PACKS = 5;

const RARITIES = ['common', 'common', 'common', 'rare', 'common', 'rare', 'common', 'common', 'common', 'legendary'] as const;
const PAGE_TITLES = ['Goalkeepers', 'Defenders', 'Midfielders', 'Forwards', 'Legends', 'Stadiums'];

/** One sticker of the album. */
export interface Sticker {
  id: number;
  name: string;
  rarity: (typeof RARITIES)[number];
  page: number;
}

/** The stickers, the same for every user. */
export const STICKERS: readonly Sticker[] = Object.freeze(
  Array.from({ length: STICKER_COUNT }, (_, i) => ({
    id: i + 1,
    name: `${PAGE_TITLES[Math.floor(i / 10)]} #${(i % 10) + 1}`,
    rarity: RARITIES[i % RARITIES.length] ?? 'common',
    page: Math.floor(i / 10) + 1,
  })),
);

/** Featured cards: each redeemable once per user for its sticker. */
export const FEATURED = Object.freeze([
  { id: 'feat-legend', sticker_id: 50, title: 'Legend of the week' },
  { id: 'feat-stadium', sticker_id: 60, title: 'Stadium of the month' },
]);

const MISSIONS = Object.freeze([
  { id: 'casino-spins', type: 'casino', title: 'Play 50 spins', goal: 50, reward_packs: 1 },
  { id: 'casino-deposit', type: 'casino', title: 'Make a deposit', goal: 1, reward_packs: 2 },
  { id: 'sports-bets', type: 'sportsbook', title: 'Place 5 bets', goal: 5, reward_packs: 1 },
  { id: 'sports-multiple', type: 'sportsbook', title: 'Place a multiple bet', goal: 1, reward_packs: 2 },
]);

type MissionType = 'casino' | 'sportsbook';

interface AlbumState {
  missionType: MissionType;
  packs: number;
  packsOpened: number;
  /** Sticker id → copies owned. */
  owned: Map<number, number>;
  lastDailyDay: string | null;
  streak: number;
  completionClaimed: boolean;
  redeemed: Set<string>;
}

const albumState = defineUserState<AlbumState>('sticker.album', () => ({
  missionType: 'casino',
  packs: INITIAL_PACKS,
  packsOpened: 0,
  owned: new Map(),
  lastDailyDay: null,
  streak: 0,
  completionClaimed: false,
  redeemed: new Set(),
}));

function addSticker(state: AlbumState, id: number): void {
  state.owned.set(id, (state.owned.get(id) ?? 0) + 1);
}

function openOne(state: AlbumState, userId: number) {
  const random = prng(userId * 1_000_003 + state.packsOpened);
  state.packs--;
  state.packsOpened++;
  const stickers = Array.from({ length: PACK_SIZE }, () => STICKERS[Math.floor(random() * STICKERS.length)] as Sticker);
  for (const s of stickers) addSticker(state, s.id);
  return { id: `pack-${state.packsOpened}`, stickers };
}

function noPacks(reply: FastifyReply): FastifyReply {
  return sendError(reply, 409, 'no_packs', 'No packs to open');
}

/** The album area of the sandbox sticker API. */
export const stickerAlbumArea: SandboxArea = {
  name: 'sticker-album',
  register(app, ctx) {
    const today = () => new Date(ctx.store.now()).toISOString().slice(0, 10);
    const progress = (state: AlbumState) => ({
      collected: state.owned.size,
      total: STICKER_COUNT,
      percent: Math.round((state.owned.size / STICKER_COUNT) * 100),
      packs_available: state.packs,
      missions: MISSIONS.filter((m) => m.type === state.missionType).map((m) => ({
        id: m.id,
        progress: 0,
        goal: m.goal,
        completed: false,
      })),
    });
    const checkin = (state: AlbumState) => ({
      daily: { claimed_today: state.lastDailyDay === today(), last_claim_day: state.lastDailyDay, streak: state.streak },
      completion: { available: state.owned.size === STICKER_COUNT && !state.completionClaimed, claimed: state.completionClaimed },
    });

    app.get('/campaigns/current', async (request, reply) => {
      const user = requireStickerUser(request, reply);
      if (!user) return reply;
      const state = ctx.store.userState(albumState, user);
      const missionType = asRecord(request.query).missionType;
      if (missionType !== undefined) {
        if (missionType !== 'casino' && missionType !== 'sportsbook') {
          return sendError(reply, 422, 'invalid_mission_type', 'missionType must be casino or sportsbook');
        }
        state.missionType = missionType;
      }
      return {
        id: 'album-2026',
        name: 'Sandbox Cup Album',
        starts_at: '2026-01-01T00:00:00Z',
        ends_at: '2026-12-31T23:59:59Z',
        missionType: state.missionType,
        total_stickers: STICKER_COUNT,
        pages: PAGE_TITLES.map((title, i) => ({ page: i + 1, title, stickers: STICKERS.filter((s) => s.page === i + 1).map((s) => s.id) })),
        missions: MISSIONS.filter((m) => m.type === state.missionType),
        featured: FEATURED.map((f) => ({ ...f, redeemed: state.redeemed.has(f.id) })),
      };
    });

    app.get('/users/me/progress', async (request, reply) => {
      const user = requireStickerUser(request, reply);
      if (!user) return reply;
      return progress(ctx.store.userState(albumState, user));
    });

    app.get('/users/me/stickers', async (request, reply) => {
      const user = requireStickerUser(request, reply);
      if (!user) return reply;
      const state = ctx.store.userState(albumState, user);
      return { data: STICKERS.filter((s) => state.owned.has(s.id)).map((s) => ({ ...s, count: state.owned.get(s.id) })) };
    });

    app.get('/users/me/checkin', async (request, reply) => {
      const user = requireStickerUser(request, reply);
      if (!user) return reply;
      return checkin(ctx.store.userState(albumState, user));
    });

    app.post('/users/me/checkin/claim', async (request, reply) => {
      const user = requireStickerUser(request, reply);
      if (!user) return reply;
      const state = ctx.store.userState(albumState, user);
      const claimType = asRecord(request.query).claimType;
      if (claimType === 'daily') {
        const day = today();
        if (state.lastDailyDay === day) {
          return sendError(reply, 409, 'already_claimed_today', 'The daily check-in was already claimed today');
        }
        const yesterday = new Date(ctx.store.now() - 86_400_000).toISOString().slice(0, 10);
        state.streak = state.lastDailyDay === yesterday ? state.streak + 1 : 1;
        state.lastDailyDay = day;
        state.packs++;
        return { ok: true, claimType, reward: { packs: 1 }, checkin: checkin(state), packs_available: state.packs };
      }
      if (claimType === 'completion') {
        if (state.completionClaimed) return sendError(reply, 409, 'already_claimed', 'The completion reward was already claimed');
        if (state.owned.size < STICKER_COUNT) return sendError(reply, 422, 'album_incomplete', 'The album is not complete yet');
        state.completionClaimed = true;
        state.packs += COMPLETION_PACKS;
        return { ok: true, claimType, reward: { packs: COMPLETION_PACKS }, checkin: checkin(state), packs_available: state.packs };
      }
      return sendError(reply, 422, 'invalid_claim_type', 'claimType must be daily or completion');
    });

    app.post<{ Params: { featuredId: string } }>('/users/me/featured/:featuredId/redeem', async (request, reply) => {
      const user = requireStickerUser(request, reply);
      if (!user) return reply;
      const state = ctx.store.userState(albumState, user);
      const featured = FEATURED.find((f) => f.id === request.params.featuredId);
      if (!featured) return sendError(reply, 404, 'featured_not_found', 'Featured card not found');
      if (state.redeemed.has(featured.id)) return sendError(reply, 409, 'already_redeemed', 'This featured card was already redeemed');
      state.redeemed.add(featured.id);
      addSticker(state, featured.sticker_id);
      return { ok: true, featuredId: featured.id, sticker: STICKERS[featured.sticker_id - 1] };
    });

    app.post('/users/me/packs/open', async (request, reply) => {
      const user = requireStickerUser(request, reply);
      if (!user) return reply;
      const state = ctx.store.userState(albumState, user);
      if (state.packs <= 0) return noPacks(reply);
      const pack = openOne(state, user.id);
      return { pack, packs_available: state.packs, progress: progress(state) };
    });

    app.post('/users/me/packs/open-all', async (request, reply) => {
      const user = requireStickerUser(request, reply);
      if (!user) return reply;
      const state = ctx.store.userState(albumState, user);
      if (state.packs <= 0) return noPacks(reply);
      const packs = [];
      while (state.packs > 0) packs.push(openOne(state, user.id));
      return { packs, packs_available: 0, progress: progress(state) };
    });
  },
};
