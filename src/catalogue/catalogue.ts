/**
 * The proxy's catalogue caches (spec 4.6 "cacheable", "cache first", "from cache only"):
 *
 * - **answers** (`deps.caches` name `catalogue`): successful anonymous catalogue GETs of the BFF
 *   (`/casino-games/list/`, `/casino-games`, `/bff/games/top-wins-dl`, `/bff/games/statistics-dl`),
 *   keyed by path and normalised query ({@link cacheKey}: parameter order never matters). The
 *   statistics entries are what `POST /api/games/stats-batch` reads.
 * - **index** (`deps.caches` name `catalogue-index`): slug → game, assembled on first need from the
 *   five assembly endpoints (see `assemble.ts`) and refreshed with the same time to live.
 *
 * Both are {@link SwrCache}s: time to live `CATALOGUE_CACHE_TTL_MS` (default 60 s; `0` turns them off),
 * single flight, stale-while-revalidate, stale-if-error, failures never stored. At most
 * {@link CATALOGUE_MAX_ENTRIES} answers and {@link CATALOGUE_MAX_BYTES} bytes.
 *
 * The entries are anonymous, so no personal data can enter: a cache fill is made by the proxy itself
 * with no `Authorization`, no `Cookie` and no visitor headers, so one entry is right for every visitor.
 * What a request with a session gets depends on `CATALOGUE_FOR_SESSIONS` (docs/behaviour.md "Which routes
 * need a session"):
 *
 * | `CATALOGUE_FOR_SESSIONS` | request without a session | request with a session (any cookie value) |
 * |---|---|---|
 * | `shared` (default) | from the cache | from the same cache; the session is neither read nor forwarded |
 * | `forward` | from the cache | forwarded with it; neither read from nor written to the cache |
 *
 * `shared` assumes the BFF's catalogue does not vary per visitor (spec 4.6 calls it "cacheable"):
 * a logged-in lobby is then answered from the cache too, during an outage as well, and a made-up
 * cookie cannot make the proxy call the BFF. `forward` is for a BFF that personalises its catalogue.
 *
 * Outage (docs/behaviour.md "Resilience"): an entry whose refresh fails keeps being answered, however old
 * (see `swr-cache.ts`); a read of an entry too old to answer at once waits for its refresh at most
 * {@link CATALOGUE_REFRESH_WAIT_MS}. Any `UpstreamError` (time-out, unreachable, the upstream guard's
 * `upstream_busy` / `upstream_circuit_open`) and any answer that is not cacheable count as a failed
 * refresh, except a 404 or 410: the page or game is gone, and the entry with it.
 *
 * HTTP caching (docs/concepts.md "The catalogue"; spec 4.6 "cacheable"): an answers entry with status 200 also carries its
 * {@link Representation} (`representation.ts`): the strong `ETag`s and the `gzip` and `br` variants,
 * made once by the fill that loaded it, counted in {@link CATALOGUE_MAX_BYTES} and local to this
 * instance (the entries shared through Redis hold the status and the identity body only). A read from
 * the cache hands it on ({@link CatalogueRead.representation}) for the routes to answer from; a read
 * forwarded with a session, or made with the cache off, has none.
 *
 * The caches are created for an app on first use and registered in `deps.caches` then, so the purge
 * routes empty them.
 *
 * @module
 */
import { parseJson } from '../envelope.js';
import type { Config } from '../config.js';
import { UpstreamAnswerError } from '../session/profile-cache.js';
import type { CacheReadObserver, CacheRegistry } from '../state/caches.js';
import type { Fleet } from '../state/fleet.js';
import { SharedEntries } from '../state/shared-entries.js';
import type { SharedStore } from '../state/store.js';
import type { UpstreamResponse, UpstreamService } from '../upstream/client.js';
import type { QueryValue } from '../upstream/paths.js';
import type { UpstreamCaller } from '../upstream/services.js';
import { assembleIndex, type CatalogueIndex } from './assemble.js';
import { cacheKey } from './query.js';
import { makeRepresentation, type Representation } from './representation.js';
import { SwrCache, type SwrEntry, type SwrOutcome } from './swr-cache.js';

/** Most cached catalogue answers. */
export const CATALOGUE_MAX_ENTRIES = 2_000;
/** Most bytes of cached catalogue answers (64 MiB). */
export const CATALOGUE_MAX_BYTES = 64 * 1024 * 1024;
/** Names of the catalogue caches in `deps.caches`. */
export const CATALOGUE_CACHE_NAMES = { answers: 'catalogue', index: 'catalogue-index' } as const;
/**
 * How long a read of an entry older than twice its time to live waits for its refresh (from the
 * refresh's start) before the stale entry is answered, in milliseconds.
 */
export const CATALOGUE_REFRESH_WAIT_MS = 500;
/** Upstream path of one game's statistics (spec 4.6 row `statistics-dl`). */
export const STATISTICS_PATH = '/bff/games/statistics-dl';

/** A cached upstream answer: a 2xx status and its body (the identity bytes, as the upstream sent them). */
export interface CachedAnswer extends SwrEntry {
  readonly status: number;
  readonly body: Buffer;
  /** The HTTP representations of `body`, made by the fill; present when `status` is 200. */
  readonly representation?: Representation | undefined;
}

/** The answer of a catalogue read: the upstream's (from the cache or not) and how it was obtained. */
export interface CatalogueRead {
  readonly response: UpstreamResponse;
  readonly outcome: SwrOutcome | 'session';
  /**
   * The cached entry's representations (entity tags, `gzip` and `br` variants) when the read was
   * answered from the cache with a 200; `undefined` for a read forwarded with a session, a failure, or
   * a read with the cache off.
   */
  readonly representation?: Representation | undefined;
}

/** Bytes an answers entry counts against {@link CATALOGUE_MAX_BYTES}: its bodies (identity and variants) and some overhead. */
export function cachedAnswerSize(entry: CachedAnswer): number {
  return entry.representation?.size ?? entry.body.length + 64;
}

/** What the catalogue needs of its app: the cache settings, the BFF, and the registry of caches. */
export interface CatalogueDeps {
  readonly config: Pick<Config, 'catalogueCacheTtlMs' | 'catalogueForSessions'>;
  readonly services: { readonly bff: UpstreamService };
  readonly caches: CacheRegistry;
  /** The shared state: with Redis, one entry per key for every instance (docs/behaviour.md "Several instances"). */
  readonly state: { readonly store: SharedStore; readonly fleet: Fleet };
  /** Told how each read of the `catalogue` and `catalogue-index` caches was answered (the metrics). */
  readonly metrics?: CacheReadObserver | undefined;
}

/** The metrics' result of a read: a read joining a load in progress is a `hit`, a read with the cache off a `miss`. */
const CACHE_RESULTS: Readonly<Record<SwrOutcome, 'hit' | 'miss' | 'stale'>> = {
  hit: 'hit',
  inflight: 'hit',
  stale: 'stale',
  miss: 'miss',
  bypass: 'miss',
};

/** A catalogue answer fit to keep: 2xx with a JSON body. */
function cacheable(res: { status: number; body: Buffer }): boolean {
  return res.status >= 200 && res.status < 300 && parseJson(res.body) !== undefined;
}

/** Statuses of a refresh that end an entry instead of leaving it stale: the resource is gone. */
const GONE_STATUSES: ReadonlySet<number> = new Set([404, 410]);

/** Whether a failed refresh keeps the stale entry: every failure but a 404 or 410 answer. */
function keepStale(error: unknown): boolean {
  return !(error instanceof UpstreamAnswerError && GONE_STATUSES.has(error.response.status));
}

/** The catalogue caches of one app. */
export class Catalogue {
  readonly answers: SwrCache<CachedAnswer>;
  readonly index: SwrCache<CatalogueIndex>;
  readonly #deps: CatalogueDeps;
  readonly #shared: SharedEntries;

  constructor(deps: CatalogueDeps) {
    this.#deps = deps;
    const ttlMs = deps.config.catalogueCacheTtlMs;
    this.#shared = new SharedEntries(deps.state.store, deps.state.fleet, 'catalogue', ttlMs);
    this.answers = new SwrCache<CachedAnswer>({
      ttlMs,
      max: CATALOGUE_MAX_ENTRIES,
      maxSize: CATALOGUE_MAX_BYTES,
      sizeOf: cachedAnswerSize,
      refreshWaitMs: CATALOGUE_REFRESH_WAIT_MS,
      keepStale,
    });
    this.index = new SwrCache<CatalogueIndex>({ ttlMs, max: 1, refreshWaitMs: CATALOGUE_REFRESH_WAIT_MS });
  }

  /**
   * Whether the reads of `ctx` are forwarded with its session: `CATALOGUE_FOR_SESSIONS=forward` and a
   * session cookie present. Otherwise they are anonymous and their answers hold no session data.
   */
  forwardsSession(ctx: UpstreamCaller): boolean {
    return ctx.token !== undefined && this.#deps.config.catalogueForSessions === 'forward';
  }

  /**
   * One anonymous GET made by the proxy itself (no session, no cookie, no visitor headers) for `ctx`'s
   * request. `fill`: it fills a cache shared by many requests, so its span (tracing on) is a root span
   * linked to that request rather than one of its children.
   */
  async #anonymous(path: string, query: Readonly<Record<string, QueryValue>> | undefined, ctx: UpstreamCaller, fill: boolean) {
    return this.#deps.services.bff.request(
      { method: 'GET', path, query, headers: { 'x-request-id': ctx.requestId }, traceRoot: fill },
      undefined,
      ctx.request,
    );
  }

  /**
   * An anonymous GET through the entries shared by every instance: a cacheable answer, or rejects with
   * {@link UpstreamAnswerError} carrying the upstream's answer.
   */
  async #sharedRead(path: string, query: Readonly<Record<string, QueryValue>> | undefined, ctx: UpstreamCaller): Promise<CachedAnswer> {
    let response: UpstreamResponse | undefined;
    const { entry } = await this.#shared.load(
      cacheKey(path, query ?? {}),
      async () => (response = await this.#anonymous(path, query, ctx, true)),
      cacheable,
    );
    if (!cacheable(entry)) throw new UpstreamAnswerError(response ?? { status: entry.status, headers: {}, body: entry.body });
    return entry;
  }

  /**
   * The fill of an answers entry: the shared read, plus the representations of a 200 (made here, once
   * per fill, so that the cache's size bound counts them).
   */
  async #fill(path: string, query: Readonly<Record<string, QueryValue>>, ctx: UpstreamCaller): Promise<CachedAnswer> {
    const { status, body, fetchedAt } = await this.#sharedRead(path, query, ctx);
    if (status !== 200) return { status, body, fetchedAt };
    return { status, body, fetchedAt, representation: await makeRepresentation(body) };
  }

  /**
   * A catalogue GET (spec 4.6): from the shared cache, or forwarded with the session when
   * {@link forwardsSession} (outcome `session`). Non-2xx answers are returned (never cached). A 200
   * from the cache comes with its entry's {@link CatalogueRead.representation}.
   *
   * @throws UpstreamError on transport failures with nothing stale to answer.
   */
  async read(ctx: UpstreamCaller, path: string, query: Readonly<Record<string, QueryValue>> = {}): Promise<CatalogueRead> {
    if (this.forwardsSession(ctx)) {
      return { response: await ctx.call('bff', { method: 'GET', path, query }), outcome: 'session' };
    }
    let outcome: SwrOutcome = 'miss';
    try {
      // With the cache off every read loads: no representation is made for a single answer.
      const entry = await this.answers.get(
        cacheKey(path, query),
        () => (this.answers.enabled ? this.#fill(path, query, ctx) : this.#sharedRead(path, query, ctx)),
        (how) => {
          outcome = how;
        },
      );
      return { response: { status: entry.status, headers: {}, body: entry.body }, outcome, representation: entry.representation };
    } catch (error) {
      if (error instanceof UpstreamAnswerError) return { response: error.response, outcome: 'miss' };
      throw error;
    } finally {
      // A failed load (nothing cached, the upstream's failure answered) is a miss too.
      this.#deps.metrics?.cacheRead(CATALOGUE_CACHE_NAMES.answers, CACHE_RESULTS[outcome]);
    }
  }

  /**
   * An uncached GET the proxy makes itself, with neither the user's session nor cookie (the sportsbook
   * half of `/api/search/unified`, whose answer holds no session data unless {@link forwardsSession}).
   *
   * @throws UpstreamError on transport failures.
   */
  anonymousGet(ctx: UpstreamCaller, path: string, query: Readonly<Record<string, QueryValue>>): Promise<UpstreamResponse> {
    return this.#anonymous(path, query, ctx, false);
  }

  /** The statistics of `slug` held by the cache (fed by `statistics-dl` reads), parsed; never calls upstream. */
  cachedStatistics(slug: string): unknown {
    const entry = this.answers.peek(cacheKey(STATISTICS_PATH, { slug }));
    return entry ? parseJson(entry.body) : undefined;
  }

  /**
   * The game index, assembled on first need and refreshed with the time to live; `undefined` when
   * the cache is off (`CATALOGUE_CACHE_TTL_MS=0`).
   *
   * @throws the upstream failure when no assembly source could be read and nothing stale is held.
   */
  async gameIndex(ctx: UpstreamCaller): Promise<CatalogueIndex | undefined> {
    if (!this.index.enabled) return undefined;
    return this.index.get(
      'index',
      () => assembleIndex(async (path) => parseJson((await this.#sharedRead(path, undefined, ctx)).body)),
      this.#deps.metrics ? (how) => this.#deps.metrics?.cacheRead(CATALOGUE_CACHE_NAMES.index, CACHE_RESULTS[how]) : undefined,
    );
  }
}

const catalogues = new WeakMap<CatalogueDeps, Catalogue>();

/** The catalogue caches of an app, created and registered in `deps.caches` on first use. */
export function catalogueOf(deps: CatalogueDeps): Catalogue {
  let catalogue = catalogues.get(deps);
  if (!catalogue) {
    catalogue = new Catalogue(deps);
    catalogues.set(deps, catalogue);
    deps.caches.set(CATALOGUE_CACHE_NAMES.answers, catalogue.answers);
    deps.caches.set(CATALOGUE_CACHE_NAMES.index, catalogue.index);
  }
  return catalogue;
}
