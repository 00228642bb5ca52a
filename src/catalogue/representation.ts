/**
 * The HTTP representations of one cached catalogue answer (spec 4.6 "cacheable"): made once per
 * cache fill, so that answering a hit costs no JSON work, no compression and
 * no hashing.
 *
 * A {@link Representation} holds, for one identity body (the upstream's JSON bytes, unchanged):
 *
 * | variant | `Content-Encoding` | bytes | strong `ETag` |
 * |---|---|---|---|
 * | `identity` | none | the body as the upstream sent it | `"<digest>"` |
 * | `gzip` | `gzip` | `zlib.gzip`, default level | `"<digest>-gzip"` |
 * | `br` | `br` | `zlib.brotliCompress`, quality {@link BROTLI_QUALITY}, text mode | `"<digest>-br"` |
 *
 * `<digest>` is the first {@link DIGEST_LENGTH} characters of the base64url SHA-256 digest of the
 * identity bytes: the same bytes give the same tags after every refill, on every instance. The encoded
 * variants have tags of their own because an encoding is another representation (RFC 9110 §8.8.3).
 * A body under {@link MIN_COMPRESSED_BYTES} is not compressed, and a variant not smaller than the
 * identity body is dropped.
 *
 * Answering ({@link Representation.select}, {@link ifNoneMatchMatches}):
 *
 * - the variant is chosen by `Accept-Encoding` (RFC 9110 §12.5.3) with `@fastify/accept-negotiator`:
 *   the highest q-value wins, `br` before `gzip` before `identity` at equal q, `q=0` refuses a coding,
 *   `*` stands for the codings not listed; no header, an empty one, or nothing acceptable: identity;
 * - `If-None-Match` (RFC 9110 §13.1.2) matches when any of its entity tags equals, by weak comparison
 *   (`W/` ignored), the tag of any variant of the representation, or when it is `*`: a client that
 *   stored the `br` variant revalidates with that variant's tag.
 *
 * @example
 * const representation = await makeRepresentation(Buffer.from(JSON.stringify(page)));
 * const variant = representation.select(request.headers['accept-encoding']); // e.g. the br variant
 * if (ifNoneMatchMatches(request.headers['if-none-match'], representation.etags)) {
 *   reply.code(304).header('etag', variant.etag).send();
 * } else {
 *   reply.headers(variant.headers).send(variant.body);
 * }
 *
 * @module
 */
import negotiate from '@fastify/accept-negotiator';
import { hash } from 'node:crypto';
import { promisify } from 'node:util';
import { brotliCompress, constants as zlibConstants, gzip } from 'node:zlib';
import { JSON_CONTENT_TYPE } from '../envelope.js';

/** A content coding the catalogue answers in (RFC 9110 §8.4.1); `identity` is no coding. */
export type ContentCoding = 'br' | 'gzip' | 'identity';

/** `Cache-Control` of catalogue answers not forwarded with a session (spec 4.6 "cacheable"). */
export const CATALOGUE_CACHE_CONTROL = 'public, max-age=30';
/** Smallest identity body that is compressed, in bytes (1 KiB): below it the headers cost more than the saving. */
export const MIN_COMPRESSED_BYTES = 1024;
/** Brotli quality of the `br` variant (0-11): a moderate level, made once per fill. */
export const BROTLI_QUALITY = 5;
/** Characters of the base64url SHA-256 digest kept in an entity tag (22 characters: 132 bits). */
export const DIGEST_LENGTH = 22;
/** Bytes counted for a representation's objects and headers beside its bodies (the cache's size bound). */
export const REPRESENTATION_OVERHEAD_BYTES = 512;

/** One variant: its bytes, its strong entity tag (quotes included) and the headers of its 200 answer. */
export interface Variant {
  readonly coding: ContentCoding;
  readonly body: Buffer;
  /** A strong entity tag, quotes included: `"<digest>"`, `"<digest>-gzip"` or `"<digest>-br"`. */
  readonly etag: string;
  /**
   * `Content-Type`, `Content-Length` (bytes of `body`), `ETag` and, for an encoded variant,
   * `Content-Encoding`; lower-case names, ready for `reply.headers`.
   */
  readonly headers: Readonly<Record<string, string>>;
}

/** Every variant of one identity body (see the module documentation). */
export interface Representation {
  readonly identity: Variant;
  readonly gzip: Variant | undefined;
  readonly br: Variant | undefined;
  /** The entity tags of every variant, quotes included (what `If-None-Match` is compared with). */
  readonly etags: ReadonlySet<string>;
  /** Bytes held: every variant's body plus {@link REPRESENTATION_OVERHEAD_BYTES}. */
  readonly size: number;
  /**
   * The variant to send for an `Accept-Encoding` field value (`undefined`: the header is absent).
   * Never throws; identity when nothing else is acceptable.
   */
  select(acceptEncoding: string | undefined): Variant;
}

const gzipAsync = promisify(gzip);
const brotliAsync = promisify(brotliCompress);

function variant(coding: ContentCoding, body: Buffer, etag: string): Variant {
  const headers: Record<string, string> = {
    'content-type': JSON_CONTENT_TYPE,
    'content-length': String(body.length),
    etag,
  };
  if (coding !== 'identity') headers['content-encoding'] = coding;
  return { coding, body, etag, headers: Object.freeze(headers) };
}

/** `compressed` when it is smaller than `identity`, else `undefined`; a failed compression gives `undefined` too. */
async function smaller(identity: Buffer, compressed: Promise<Buffer>): Promise<Buffer | undefined> {
  try {
    const bytes = await compressed;
    return bytes.length < identity.length ? bytes : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The strong entity tag of `identity` bytes: `"` + the first {@link DIGEST_LENGTH} characters of their
 * base64url SHA-256 digest + `"`.
 *
 * @example entityTagOf(Buffer.from('{}')) // '"RBNvo1WzZ4oRRq0W9-hknp"'
 */
export function entityTagOf(identity: Buffer): string {
  return `"${hash('sha256', identity, 'base64url').slice(0, DIGEST_LENGTH)}"`;
}

/**
 * Makes every variant of an identity JSON body, once (a cache fill): the entity tags, and the `gzip`
 * and `br` variants compressed in parallel off the main thread (the zlib thread pool). A body under
 * `minCompressedBytes` gets the identity variant only; a variant not smaller than the body is dropped.
 *
 * @param identity - the JSON bytes as they are answered without coding.
 * @param minCompressedBytes - smallest body compressed, in bytes; default {@link MIN_COMPRESSED_BYTES}.
 */
export async function makeRepresentation(identity: Buffer, minCompressedBytes = MIN_COMPRESSED_BYTES): Promise<Representation> {
  const tag = entityTagOf(identity);
  let gzipped: Buffer | undefined;
  let brotli: Buffer | undefined;
  if (identity.length >= minCompressedBytes) {
    [gzipped, brotli] = await Promise.all([
      smaller(identity, gzipAsync(identity)),
      smaller(
        identity,
        brotliAsync(identity, {
          params: {
            [zlibConstants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY,
            [zlibConstants.BROTLI_PARAM_MODE]: zlibConstants.BROTLI_MODE_TEXT,
            [zlibConstants.BROTLI_PARAM_SIZE_HINT]: identity.length,
          },
        }),
      ),
    ]);
  }
  return representationOf(identity, tag, gzipped, brotli);
}

/** Builds a {@link Representation} from bytes already made (tests give their own). */
export function representationOf(identity: Buffer, tag: string, gzipped?: Buffer, brotli?: Buffer): Representation {
  const opaque = tag.slice(1, -1);
  const plain = variant('identity', identity, tag);
  const gz = gzipped ? variant('gzip', gzipped, `"${opaque}-gzip"`) : undefined;
  const br = brotli ? variant('br', brotli, `"${opaque}-br"`) : undefined;
  const codings: ContentCoding[] = [];
  if (br) codings.push('br');
  if (gz) codings.push('gzip');
  codings.push('identity');
  const byCoding: Readonly<Record<ContentCoding, Variant>> = { identity: plain, gzip: gz ?? plain, br: br ?? plain };
  return {
    identity: plain,
    gzip: gz,
    br,
    etags: new Set([plain, gz, br].flatMap((v) => (v ? [v.etag] : []))),
    size: identity.length + (gz?.body.length ?? 0) + (br?.body.length ?? 0) + REPRESENTATION_OVERHEAD_BYTES,
    select: codings.length === 1 ? () => plain : (acceptEncoding) => byCoding[negotiateEncoding(acceptEncoding, codings)],
  };
}

/** Most `Accept-Encoding` values remembered per set of codings; the memory is emptied when full. */
const NEGOTIATION_MEMORY = 256;
const negotiated = new Map<string, Map<string, ContentCoding>>();

/** A `<coding>;q=0` element: the coding refused outright (RFC 9110 §12.4.2, up to three decimals). */
const REFUSED: Readonly<Record<ContentCoding, RegExp>> = {
  br: /(?:^|,)[ \t]*br[ \t]*;[ \t]*q[ \t]*=[ \t]*0(?:\.0{0,3})?[ \t]*(?=,|$)/,
  gzip: /(?:^|,)[ \t]*gzip[ \t]*;[ \t]*q[ \t]*=[ \t]*0(?:\.0{0,3})?[ \t]*(?=,|$)/,
  identity: /(?:^|,)[ \t]*identity[ \t]*;[ \t]*q[ \t]*=[ \t]*0(?:\.0{0,3})?[ \t]*(?=,|$)/,
};

/**
 * The coding to answer in, among `codings` (in preference order, `identity` last), for an
 * `Accept-Encoding` field value (RFC 9110 §12.5.3): the highest q-value wins, the earlier coding at
 * equal q; `q=0` refuses a coding; `*` stands for the codings the value does not list; codings are
 * compared case-insensitively. No header, an empty value or no acceptable coding: `identity` (the
 * proxy never answers 406). Decided by `@fastify/accept-negotiator`; results are remembered per value.
 *
 * @example negotiateEncoding('gzip, deflate, br, zstd', ['br', 'gzip', 'identity']) // 'br'
 * @example negotiateEncoding('br;q=0, gzip;q=0.8', ['br', 'gzip', 'identity']) // 'gzip'
 */
export function negotiateEncoding(acceptEncoding: string | undefined, codings: readonly ContentCoding[]): ContentCoding {
  if (acceptEncoding === undefined || acceptEncoding.length === 0) return 'identity';
  const key = codings.join(',');
  let memory = negotiated.get(key);
  if (!memory) {
    memory = new Map();
    negotiated.set(key, memory);
  }
  const known = memory.get(acceptEncoding);
  if (known !== undefined) return known;
  const chosen = decide(acceptEncoding.toLowerCase(), codings);
  if (memory.size >= NEGOTIATION_MEMORY) memory.clear();
  memory.set(acceptEncoding, chosen);
  return chosen;
}

function decide(value: string, codings: readonly ContentCoding[]): ContentCoding {
  let candidates = [...codings];
  for (;;) {
    const chosen = negotiate(value, candidates) as ContentCoding | null;
    if (chosen === null) return 'identity';
    // The library reads `*` as the first candidate even when that coding is listed with q=0
    // (`br;q=0, *`): a coding refused outright is never chosen, the next one is tried.
    if (!REFUSED[chosen].test(value)) return chosen;
    candidates = candidates.filter((c) => c !== chosen);
    if (candidates.length === 0) return 'identity';
  }
}

/**
 * Whether an `If-None-Match` field value matches (RFC 9110 §13.1.2): it is `*`, or one of its entity
 * tags equals one of `etags` by weak comparison (a `W/` prefix is ignored; tags compared with their
 * quotes, case-sensitively). Elements that are not entity tags are skipped; an absent header never
 * matches. Linear in the length of the value.
 *
 * @param etags - the current tags, quotes included (`"abc"`), without `W/`.
 * @example ifNoneMatchMatches('W/"a", "b"', new Set(['"b"'])) // true
 * @example ifNoneMatchMatches('"a-br"', new Set(['"a"', '"a-br"'])) // true
 */
export function ifNoneMatchMatches(header: string | undefined, etags: ReadonlySet<string>): boolean {
  if (header === undefined) return false;
  const n = header.length;
  let i = 0;
  while (i < n && (header[i] === ' ' || header[i] === '\t')) i++;
  if (header[i] === '*') {
    let j = i + 1;
    while (j < n && (header[j] === ' ' || header[j] === '\t')) j++;
    if (j === n) return true;
  }
  while (i < n) {
    const c = header[i];
    if (c === ' ' || c === '\t' || c === ',') {
      i++;
      continue;
    }
    if (c === 'W' && header[i + 1] === '/') i += 2;
    if (header[i] !== '"') {
      // Not an entity tag: skip the element.
      const next = header.indexOf(',', i);
      if (next < 0) return false;
      i = next + 1;
      continue;
    }
    const end = header.indexOf('"', i + 1);
    if (end < 0) return false;
    if (etags.has(header.slice(i, end + 1))) return true;
    i = end + 1;
  }
  return false;
}
