/**
 * Server-side catalogue assembly (spec 4.6 "Upstream endpoints used only during server-side catalogue
 * assembly"): the game index (slug → game) that `GET /api/games/by-slugs` reads, built from
 *
 * | source | upstream |
 * |---|---|
 * | recent wins | `GET /bff/games/last-wins` |
 * | high payers | `GET /bff/games/game-high-payers-dl` |
 * | lobby home | `GET /casino-games/home` |
 * | base list | `GET /casino-games/list/base` |
 * | catalogue pages | `GET /casino-games/page/{page}` for page 1, 2, … |
 *
 * Game records have no shape in the specification (spec 2.8), so games are found by position: every
 * object with a string `slug` that sits in an array under `data`, `games`, `items`, `list` or
 * `results` (or is the answer itself when it is an array), and every object under a `game` key (a
 * win names its game). Categories and providers (under other keys) are not games. When a slug is
 * seen in several sources, the later source wins, in the order of the table: the catalogue pages,
 * the most complete records, come last.
 *
 * Pages are read from 1 while the answer says there are more (`last_page`, `lastPage`,
 * `total_pages` or `meta.last_page`), or, without such a field, while a page brings new games;
 * at most {@link MAX_ASSEMBLY_PAGES} pages, four at a time.
 *
 * @module
 */
import { SLUG_PATTERN } from './query.js';
import type { SwrEntry } from './swr-cache.js';

/** A game record as the BFF sent it; only `slug` is known. */
export type Game = Readonly<Record<string, unknown>> & { readonly slug: string };

/** The assembled index. */
export interface CatalogueIndex extends SwrEntry {
  /** Games by slug. */
  readonly games: ReadonlyMap<string, Game>;
  /** Upstream paths that could not be read during this assembly. */
  readonly failed: readonly string[];
}

/** The upstream paths of the assembly. */
export const ASSEMBLY_SOURCES = {
  lastWins: '/bff/games/last-wins',
  highPayers: '/bff/games/game-high-payers-dl',
  home: '/casino-games/home',
  base: '/casino-games/list/base',
  page: '/casino-games/page/{page}',
} as const;

/** Most catalogue pages read by one assembly. */
export const MAX_ASSEMBLY_PAGES = 50;
const PAGE_CONCURRENCY = 4;
const GAME_CONTAINERS = new Set(['data', 'games', 'items', 'list', 'results']);
const SLUG = new RegExp(SLUG_PATTERN);
const MAX_DEPTH = 8;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function asGame(value: unknown): Game | undefined {
  return isRecord(value) && typeof value.slug === 'string' && SLUG.test(value.slug) ? (value as Game) : undefined;
}

/**
 * The games found in one upstream answer (see the module documentation for the rule).
 *
 * @example
 * extractGames({ sections: [{ slug: 'slots', games: [{ slug: 'big-bass', name: 'Big Bass' }] }] })
 * // [{ slug: 'big-bass', name: 'Big Bass' }]
 */
export function extractGames(answer: unknown): Game[] {
  const out: Game[] = [];
  const visit = (value: unknown, inContainer: boolean, depth: number): void => {
    if (depth > MAX_DEPTH) return;
    if (Array.isArray(value)) {
      for (const item of value) {
        const game = inContainer ? asGame(item) : undefined;
        if (game) out.push(game);
        else visit(item, false, depth + 1);
      }
      return;
    }
    if (!isRecord(value)) return;
    for (const [key, child] of Object.entries(value)) {
      if (key === 'game') {
        const game = asGame(child);
        if (game) {
          out.push(game);
          continue;
        }
      }
      visit(child, GAME_CONTAINERS.has(key), depth + 1);
    }
  };
  visit(answer, true, 0);
  return out;
}

function lastPageOf(answer: unknown): number | undefined {
  if (!isRecord(answer)) return undefined;
  const meta = isRecord(answer.meta) ? answer.meta : {};
  for (const value of [answer.last_page, answer.lastPage, answer.total_pages, meta.last_page, meta.lastPage]) {
    const n = typeof value === 'string' ? Number(value) : value;
    if (typeof n === 'number' && Number.isInteger(n) && n >= 0) return n;
  }
  return undefined;
}

/** Reads one upstream path as JSON; rejects when it cannot (any non-2xx, transport failure, not JSON). */
export type JsonReader = (path: string) => Promise<unknown>;

/**
 * Builds the index from the assembly sources.
 *
 * @param read - reads one upstream path (anonymous: the index is shared by every visitor).
 * @param now - the clock, epoch milliseconds.
 * @throws the first failure when no source at all could be read (nothing is cached then).
 */
export async function assembleIndex(read: JsonReader, now: () => number = Date.now): Promise<CatalogueIndex> {
  const failed: string[] = [];
  let firstError: unknown;
  const attempt = async (path: string): Promise<unknown> => {
    try {
      return await read(path);
    } catch (error) {
      failed.push(path);
      firstError ??= error;
      return undefined;
    }
  };
  const pagePath = (n: number) => ASSEMBLY_SOURCES.page.replace('{page}', String(n));
  const [lastWins, highPayers, home, base, first] = await Promise.all([
    attempt(ASSEMBLY_SOURCES.lastWins),
    attempt(ASSEMBLY_SOURCES.highPayers),
    attempt(ASSEMBLY_SOURCES.home),
    attempt(ASSEMBLY_SOURCES.base),
    attempt(pagePath(1)),
  ]);
  const pages: unknown[] = [first];
  const declaredLast = lastPageOf(first);
  if (first !== undefined && declaredLast !== undefined) {
    const last = Math.min(declaredLast, MAX_ASSEMBLY_PAGES);
    for (let start = 2; start <= last; start += PAGE_CONCURRENCY) {
      const batch: Promise<unknown>[] = [];
      for (let n = start; n < start + PAGE_CONCURRENCY && n <= last; n++) batch.push(attempt(pagePath(n)));
      pages.push(...(await Promise.all(batch)));
    }
  } else if (first !== undefined) {
    const seen = new Set(extractGames(first).map((g) => g.slug));
    for (let n = 2; n <= MAX_ASSEMBLY_PAGES; n++) {
      const page = await attempt(pagePath(n));
      if (page === undefined) {
        failed.pop(); // running past the last page is how an undeclared end is found
        break;
      }
      const fresh = extractGames(page).filter((g) => !seen.has(g.slug));
      if (fresh.length === 0) break;
      for (const g of fresh) seen.add(g.slug);
      pages.push(page);
    }
  }
  const answers = [lastWins, highPayers, home, base, ...pages];
  if (answers.every((a) => a === undefined)) throw firstError ?? new Error('catalogue assembly read nothing');
  const games = new Map<string, Game>();
  for (const answer of answers) for (const game of extractGames(answer)) games.set(game.slug, game);
  return { fetchedAt: now(), games, failed };
}
