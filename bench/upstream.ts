/**
 * The fast upstream of the benchmark: a plain `node:http` server that answers every path with a
 * fixed ~1 KB JSON body, the way a quick BFF would. It refuses with 401 any request without both
 * `Authorization: Bearer …` and a `Cookie` header, except for the anonymous catalogue paths
 * (`/casino-games…`), which the proxy fills its shared cache from without credentials. It also
 * serves `GET /auth/user-profile` (a small profile with `user.id`), `POST /wallet/add-credit` (a
 * deposit result with a real wallet) and the catalogue list `GET /casino-games/list/` (a page of
 * {@link CATALOGUE_GAMES} games, {@link CATALOGUE_PAGE}: a few tens of KB, the same bytes on every
 * call), answers 503 on the paths it was told are unavailable, and counts the calls it receives per path.
 *
 * Control endpoints, never proxied: `GET /__bench/calls` answers the counts
 * (`{ byPath, anonymous, unauthorized }`), `POST /__bench/reset` sets them to zero,
 * `POST /__bench/unavailable` with a path as its body makes every later call of that path (any query)
 * a 503 (kept across resets).
 *
 * Run as a child process, compiled to JavaScript by `compile.ts`: `node upstream.mjs [port]`;
 * the first line on standard output is `{"port":N}`.
 *
 * @module
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { type Listening, listenOnLoopback, runAsScript } from './serve.js';

/** The user id of the profile the upstream serves (a deposit must name it). */
export const BENCH_USER_ID = 4242;

/** Paths answered without credentials (the anonymous catalogue reads). */
export const PUBLIC_PREFIXES = ['/casino-games', '/bff/games/top-wins-dl', '/bff/games/statistics-dl'] as const;

function games(count: number): object[] {
  const out: object[] = [];
  for (let i = 0; i < count; i++) {
    out.push({ id: 1000 + i, slug: `game-${i}`, name: `Game ${i}`, provider: 'studio', rtp: 96.5, hot: i % 2 === 0 });
  }
  return out;
}

/** Pads a JSON object with a `note` field until it serialises to about `size` bytes. */
function sized(value: Record<string, unknown>, size: number): Buffer {
  const base = JSON.stringify({ ...value, note: '' });
  const pad = Math.max(0, size - Buffer.byteLength(base));
  return Buffer.from(JSON.stringify({ ...value, note: 'x'.repeat(pad) }));
}

/** The upstream path of the catalogue list (the proxy's `GET /api/games/list`, spec 4.6). */
export const CATALOGUE_UPSTREAM_PATH = '/casino-games/list/';
/** Games on one catalogue page. */
export const CATALOGUE_GAMES = 24;

/** A deterministic pseudo-random sequence in [0, 1) (mulberry32): the same page on every start. */
function sequence(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const CDN = 'https://cdn.casino.example';
const STUDIOS = ['Northwind Studios', 'Red Lantern Games', 'Bluefin Interactive', 'Copperleaf Gaming', 'Starforge Play', 'Tidewater Labs'];
const CATEGORIES = [
  { id: 1, name: 'Slots', slug: 'slots' },
  { id: 2, name: 'Live Casino', slug: 'live-casino' },
  { id: 3, name: 'Crash Games', slug: 'crash' },
  { id: 4, name: 'Table Games', slug: 'table-games' },
  { id: 5, name: 'Jackpots', slug: 'jackpots' },
  { id: 6, name: 'New Releases', slug: 'new' },
  { id: 7, name: 'Popular', slug: 'popular' },
  { id: 8, name: 'Megaways', slug: 'megaways' },
];
const FIRST = ['Golden', 'Mystic', 'Wild', 'Lucky', 'Royal', 'Crystal', 'Midnight', 'Blazing', 'Frozen', 'Ancient', 'Neon', 'Thunder'];
const SECOND = [
  'Dragon',
  'Fortune',
  'Pharaoh',
  'Buffalo',
  'Gems',
  'Tiger',
  'Rockets',
  'Orchard',
  'Voyage',
  'Temple',
  'Carnival',
  'Harbour',
];
const TAGS = ['bonus-buy', 'free-spins', 'multiplier', 'cluster-pays', 'hold-and-win', 'cascading-reels', 'progressive', 'high-volatility'];
const LANGUAGES = ['pt-BR', 'en', 'es'];
const slugOf = (text: string) =>
  text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');

/**
 * One page of the catalogue list as a BFF would send it: {@link CATALOGUE_GAMES} games with their
 * names, slugs, providers, categories, tags, image URLs and play limits, and the page's position in
 * the whole list. Deterministic (a fixed seed): the same bytes on every call and every start.
 */
function cataloguePage(): Buffer {
  const random = sequence(20_240_601);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)] as T;
  const data: object[] = [];
  for (let i = 0; i < CATALOGUE_GAMES; i++) {
    const name = `${FIRST[i % FIRST.length]} ${SECOND[(i * 5 + 3) % SECOND.length]}${i >= FIRST.length ? ` ${['Deluxe', 'Megaways', 'Rush'][i % 3]}` : ''}`;
    const slug = slugOf(name);
    const studio = pick(STUDIOS);
    const studioSlug = slugOf(studio);
    const categories = [CATEGORIES[0], pick(CATEGORIES.slice(2)), ...(random() < 0.4 ? [CATEGORIES[6]] : [])];
    const images = `${CDN}/games/${studioSlug}/${slug}`;
    // Image URLs carry a content hash, as a CDN's cache-busting names do.
    const hash = () =>
      Math.floor(random() * 2 ** 32)
        .toString(16)
        .padStart(8, '0');
    data.push({
      id: 10_400 + i * 7,
      game_id: `${studioSlug.split('-')[0]}_${slug.replaceAll('-', '_')}`,
      name,
      slug,
      description: `${name} is a ${pick(['5x3', '5x4', '6x5', '3x3'])} video slot by ${studio} with ${pick(['free spins', 'a hold-and-win bonus', 'cascading reels', 'expanding wilds'])} and up to ${pick([2500, 5000, 10000, 21100])}x the bet.`,
      provider: { id: 300 + STUDIOS.indexOf(studio), name: studio, slug: studioSlug, logo: `${CDN}/providers/${studioSlug}/logo.svg` },
      categories: [...new Map(categories.map((c) => [c?.slug, c])).values()],
      tags: [pick(TAGS), pick(TAGS)].filter((t, n, all) => all.indexOf(t) === n),
      images: {
        thumbnail: `${images}/thumbnail-300x400.webp?v=${hash()}`,
        square: `${images}/square-400x400.webp?v=${hash()}`,
        banner: `${images}/banner-1280x400.webp?v=${hash()}`,
        background: `${images}/background-1920x1080.jpg?v=${hash()}`,
      },
      rtp: Math.round((94 + random() * 3) * 100) / 100,
      volatility: pick(['low', 'medium', 'high', 'very-high']),
      min_bet: pick([0.1, 0.2, 0.4, 1]),
      max_bet: pick([50, 100, 250, 500]),
      lines: pick([10, 20, 25, 243, 1024, 117649]),
      has_demo: random() < 0.8,
      has_jackpot: random() < 0.2,
      is_new: i % 6 === 0,
      is_hot: i % 4 === 1,
      devices: ['desktop', 'mobile'],
      languages: LANGUAGES,
      release_date: `202${3 + (i % 3)}-${String(1 + ((i * 5) % 12)).padStart(2, '0')}-${String(1 + ((i * 11) % 28)).padStart(2, '0')}`,
      position: i + 1,
      launch: { path: `/casino/play/${slug}`, demo_path: `/casino/demo/${slug}` },
    });
  }
  return Buffer.from(
    JSON.stringify({
      data,
      meta: { current_page: 1, per_page: CATALOGUE_GAMES, total: 1_152, last_page: 48, sort: 'popularity' },
      links: { first: '/casino-games/list/?page=1', last: '/casino-games/list/?page=48', prev: null, next: '/casino-games/list/?page=2' },
    }),
  );
}

/** The body of `GET /casino-games/list/` (see {@link cataloguePage}). */
export const CATALOGUE_PAGE = cataloguePage();

/** The ~1 KB JSON body of ordinary answers. */
export const PAYLOAD = sized({ ok: true, data: games(8), page: 1, total: 8 }, 1024);
const PROFILE = Buffer.from(
  JSON.stringify({
    user: { id: BENCH_USER_ID, name: 'Bench User', email: 'bench@example.com', currency: 'BRL' },
    userInfo: { verified: true, country: 'BR' },
  }),
);
const DEPOSIT = sized(
  {
    transaction_id: 'tx-0001',
    status: 'pending',
    payment_method: 'pix',
    qr_code: '00020126580014br.gov.bcb.pix',
    real_wallet: { id: 1, currency: 'BRL', balance: 155001 },
  },
  1024,
);
const NO_TOKEN = Buffer.from('{"reason":"no_token"}');
const UNAVAILABLE = Buffer.from('{"reason":"service_unavailable","message":"The service is unavailable"}');
const JSON_TYPE = 'application/json; charset=utf-8';
const EMPTY = Buffer.alloc(0);

function answer(res: ServerResponse, status: number, body: Buffer): void {
  res.writeHead(status, { 'content-type': JSON_TYPE, 'content-length': body.length });
  res.end(body);
}

/** Counts of the calls received since the last reset. */
export interface UpstreamCalls {
  byPath: Record<string, number>;
  /** Calls without both credentials (public paths included). */
  anonymous: number;
  /** Calls refused with 401. */
  unauthorized: number;
}

/**
 * Starts the upstream on loopback.
 * @param port - listen port; `0` (default) picks a free one.
 * @returns the chosen port and a `close()`.
 */
export async function startUpstream(port = 0): Promise<Listening> {
  let byPath = new Map<string, number>();
  let anonymous = 0;
  let unauthorized = 0;
  const unavailable = new Set<string>();

  const handle = (req: IncomingMessage, res: ServerResponse, path: string, body: Buffer): void => {
    if (path.startsWith('/__bench/')) {
      if (path === '/__bench/reset') {
        byPath = new Map();
        anonymous = 0;
        unauthorized = 0;
        answer(res, 200, Buffer.from('{"ok":true}'));
        return;
      }
      if (path === '/__bench/unavailable') {
        unavailable.add(body.toString('utf8').trim());
        answer(res, 200, Buffer.from('{"ok":true}'));
        return;
      }
      const calls: UpstreamCalls = { byPath: Object.fromEntries(byPath), anonymous, unauthorized };
      answer(res, 200, Buffer.from(JSON.stringify(calls)));
      return;
    }
    byPath.set(path, (byPath.get(path) ?? 0) + 1);
    const authorization = req.headers.authorization;
    const authenticated = authorization?.startsWith('Bearer ') === true && req.headers.cookie !== undefined;
    if (!authenticated) {
      anonymous++;
      if (!PUBLIC_PREFIXES.some((prefix) => path.startsWith(prefix))) {
        unauthorized++;
        answer(res, 401, NO_TOKEN);
        return;
      }
    }
    if (unavailable.has(path)) answer(res, 503, UNAVAILABLE);
    else if (path === '/auth/user-profile') answer(res, 200, PROFILE);
    else if (path === '/wallet/add-credit') answer(res, 200, DEPOSIT);
    else if (path === CATALOGUE_UPSTREAM_PATH) answer(res, 200, CATALOGUE_PAGE);
    else answer(res, 200, PAYLOAD);
  };

  const server = createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    if (req.method === 'GET' || req.method === 'HEAD') {
      handle(req, res, path, EMPTY);
      return;
    }
    // Bodies are read to the end before answering, as a real service would (kept only for the control paths).
    const chunks: Buffer[] = [];
    const keep = path.startsWith('/__bench/');
    req.on('data', (chunk: Buffer) => {
      if (keep) chunks.push(chunk);
    });
    req.on('end', () => handle(req, res, path, keep ? Buffer.concat(chunks) : EMPTY));
  });
  return listenOnLoopback(server, port);
}

await runAsScript(import.meta.url, startUpstream);
