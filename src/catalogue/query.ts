/**
 * The catalogue list query (spec 4.6 `GET /casino-games/list/?...`): the parameters the proxy
 * accepts, their normal form, and the cache key built from it.
 *
 * Accepted parameters (spec 4.12 leaves the complete set open; this is the proxy's choice). Anything
 * else is dropped, never forwarded, so it can neither reach the BFF nor split the cache:
 *
 * | parameter | form | forwarded as |
 * |---|---|---|
 * | `categories[]` (repeatable), `category` | slug, at most 20 | `categories[]`, sorted, duplicates removed |
 * | `providers[]` (repeatable), `provider` | slug, at most 20 | `providers[]`, sorted, duplicates removed |
 * | `search` | text, at most 100 characters | trimmed, inner white space collapsed; left out when empty |
 * | `page` | integer 1-99999 | as given |
 * | `per_page` | integer 1-100 | as given |
 *
 * A slug is 1-128 characters of `A-Z a-z 0-9 _ -`, starting with a letter or digit.
 *
 * @module
 */
import { Type } from '@sinclair/typebox';
import { buildQuery, type QueryValue } from '../upstream/paths.js';

/** Pattern of a game, category or provider slug. */
export const SLUG_PATTERN = '^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$';
/** Most categories (or providers) in one list query. */
export const MAX_FILTER_VALUES = 20;
/** Largest `per_page` accepted (spec 8 leaves page-size bounds open). */
export const MAX_PER_PAGE = 100;

/** A slug (TypeBox). */
export const Slug = Type.String({ pattern: SLUG_PATTERN });
const SlugOrList = Type.Union([Slug, Type.Array(Slug, { maxItems: MAX_FILTER_VALUES })]);
/** `page` as a query string value: 1-99999. */
export const PageParam = Type.String({ pattern: '^[1-9][0-9]{0,4}$' });
/** `per_page` as a query string value: 1-100. */
export const PerPageParam = Type.String({ pattern: '^(100|[1-9][0-9]?)$' });
/** `search`: at most 100 characters. */
export const SearchParam = Type.String({ maxLength: 100 });

/** The query string of `GET /api/games/list` (see the module table). */
export const ListQuerystring = Type.Object({
  'categories[]': Type.Optional(SlugOrList),
  category: Type.Optional(Slug),
  'providers[]': Type.Optional(SlugOrList),
  provider: Type.Optional(Slug),
  search: Type.Optional(SearchParam),
  page: Type.Optional(PageParam),
  per_page: Type.Optional(PerPageParam),
});

/** The same parameters in a JSON body (legacy `POST /api/games/search`); numbers may be JSON numbers. */
export const ListBody = Type.Object({
  categories: Type.Optional(SlugOrList),
  category: Type.Optional(Slug),
  providers: Type.Optional(SlugOrList),
  provider: Type.Optional(Slug),
  search: Type.Optional(SearchParam),
  page: Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: 99_999 }), PageParam])),
  per_page: Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: MAX_PER_PAGE }), PerPageParam])),
});

/** Loose input of {@link listQuery}: any mix of the accepted parameters. */
export interface ListInput {
  categories?: string | readonly string[] | undefined;
  providers?: string | readonly string[] | undefined;
  search?: string | undefined;
  page?: string | number | undefined;
  per_page?: string | number | undefined;
}

function sortedSet(...values: (string | readonly string[] | undefined)[]): string[] {
  const out = new Set<string>();
  for (const value of values) {
    if (value === undefined) continue;
    for (const item of typeof value === 'string' ? [value] : value) if (item) out.add(item);
  }
  return [...out].sort();
}

/**
 * The normal form of a list query: the upstream query object with its keys in a fixed order,
 * arrays sorted and de-duplicated, empty values left out. Two requests that differ only in
 * parameter order (or in repeated values) give the same object.
 *
 * @example
 * listQuery({ categories: ['slots', 'crash', 'slots'], page: 2 })
 * // { 'categories[]': ['crash', 'slots'], page: '2' }
 */
export function listQuery(input: ListInput): Record<string, QueryValue> {
  const out: Record<string, QueryValue> = {};
  const categories = sortedSet(input.categories);
  if (categories.length > 0) out['categories[]'] = categories;
  if (input.page !== undefined) out.page = String(input.page);
  if (input.per_page !== undefined) out.per_page = String(input.per_page);
  const providers = sortedSet(input.providers);
  if (providers.length > 0) out['providers[]'] = providers;
  const search = input.search?.trim().replace(/\s+/g, ' ');
  if (search) out.search = search;
  return out;
}

/** Reads the accepted parameters of a `GET /api/games/list`-like query string. */
export function listInputFromQuery(query: Record<string, unknown>): ListInput {
  const many = (a: unknown, b: unknown): string[] => sortedSet(a as string | string[] | undefined, b as string | undefined);
  return {
    categories: many(query['categories[]'], query.category),
    providers: many(query['providers[]'], query.provider),
    search: query.search as string | undefined,
    page: query.page as string | undefined,
    per_page: query.per_page as string | undefined,
  };
}

/** Reads the accepted parameters of a legacy search body. */
export function listInputFromBody(body: Record<string, unknown>): ListInput {
  const many = (a: unknown, b: unknown): string[] => sortedSet(a as string | string[] | undefined, b as string | undefined);
  return {
    categories: many(body.categories, body.category),
    providers: many(body.providers, body.provider),
    search: body.search as string | undefined,
    page: body.page as string | number | undefined,
    per_page: body.per_page as string | number | undefined,
  };
}

/**
 * The cache key of an upstream GET: its path and its query with keys sorted (array values sorted
 * too), so that parameter order never matters.
 */
export function cacheKey(path: string, query: Readonly<Record<string, QueryValue>> = {}): string {
  const sorted: Record<string, QueryValue> = {};
  for (const key of Object.keys(query).sort()) {
    const value = query[key];
    sorted[key] = Array.isArray(value) ? [...value].map(String).sort() : value;
  }
  return `GET ${path}${buildQuery(sorted)}`;
}
