/**
 * HTTP caching of the cached catalogue (spec 4.6 "cacheable"; `src/catalogue/representation.ts`):
 * strong entity tags, `304` to a matching `If-None-Match`, `br` and `gzip` variants made once per
 * cache fill and chosen by `Accept-Encoding`, `Vary: Accept-Encoding`; none of it for answers forwarded
 * with a session. The pure parts table by table, the answers over real sockets (the proxy in front of a
 * recording upstream; requests through `node:http`, which leaves the bodies encoded).
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { type IncomingHttpHeaders, request as httpRequest } from 'node:http';
import { beforeEach, describe, test } from 'node:test';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { cachedAnswerSize } from '../src/catalogue/catalogue.js';
import {
  type ContentCoding,
  entityTagOf,
  ifNoneMatchMatches,
  MIN_COMPRESSED_BYTES,
  makeRepresentation,
  negotiateEncoding,
  REPRESENTATION_OVERHEAD_BYTES,
} from '../src/catalogue/representation.js';
import { HAVE_REDIS, startRedisFleet } from './helpers/redis-server.js';
import { fakeJwt, type TestProxy, useProxiesWithRecorder } from './helpers/recording-upstream.js';

describe('If-None-Match (RFC 9110 §13.1.2)', () => {
  const tags = new Set(['"abc"', '"abc-gzip"', '"abc-br"', '"a,b"']);
  const cases: readonly [header: string | undefined, matches: boolean][] = [
    [undefined, false],
    ['', false],
    ['"abc"', true],
    ['W/"abc"', true],
    ['"abc-br"', true],
    ['W/"abc-gzip"', true],
    ['"x", "abc"', true],
    ['"x",W/"abc"', true],
    ['  "x" ,\t"y", W/"abc-br"  ', true],
    ['*', true],
    ['  *  ', true],
    ['"x", *', false],
    ['"abcd"', false],
    ['"ABC"', false],
    ['abc', false],
    ['w/"abc"', false],
    ['"abc', false],
    ['W/', false],
    ['"a,b"', true],
    ['"a", "b"', false],
    ['junk, "abc"', true],
    ['"x"junk, "abc"', true],
    [',,,', false],
  ];
  for (const [header, matches] of cases) {
    test(`${JSON.stringify(header)} ${matches ? 'matches' : 'does not match'}`, () => {
      assert.equal(ifNoneMatchMatches(header, tags), matches);
    });
  }
});

describe('Accept-Encoding negotiation (RFC 9110 §12.5.3)', () => {
  const all: readonly ContentCoding[] = ['br', 'gzip', 'identity'];
  const gzipOnly: readonly ContentCoding[] = ['gzip', 'identity'];
  const cases: readonly [header: string | undefined, codings: readonly ContentCoding[], chosen: ContentCoding][] = [
    [undefined, all, 'identity'],
    ['', all, 'identity'],
    ['gzip, deflate, br, zstd', all, 'br'],
    ['deflate, gzip, br, zstd', all, 'br'],
    ['gzip, deflate', all, 'gzip'],
    ['deflate', all, 'identity'],
    ['zstd;q=1, gzip;q=0.1', all, 'gzip'],
    ['br;q=0, gzip', all, 'gzip'],
    ['br;q=0.000, gzip;q=0.2', all, 'gzip'],
    ['gzip;q=1.0, br;q=0.5', all, 'gzip'],
    ['br;q=0.5, gzip;q=0.5', all, 'br'],
    ['gzip;q=0.5, br;q=0.5', all, 'br'],
    ['gzip;q=0.5, identity', all, 'identity'],
    ['identity', all, 'identity'],
    ['gzip;q=0, br;q=0', all, 'identity'],
    ['*', all, 'br'],
    ['*;q=0', all, 'identity'],
    ['br;q=0, *', all, 'gzip'],
    ['br;q=0, gzip;q=0, *', all, 'identity'],
    ['GZIP', all, 'gzip'],
    ['x-gzip', all, 'identity'],
    ['br', gzipOnly, 'identity'],
    ['gzip, br', gzipOnly, 'gzip'],
    ['*', gzipOnly, 'gzip'],
    ['br, gzip', ['identity'], 'identity'],
  ];
  for (const [header, codings, chosen] of cases) {
    test(`${JSON.stringify(header)} among ${codings.join(', ')} → ${chosen}`, () => {
      assert.equal(negotiateEncoding(header, codings), chosen);
      // Remembered answers are the same answers.
      assert.equal(negotiateEncoding(header, codings), chosen);
    });
  }
});

/** A catalogue page of `games` games, as JSON bytes (about 120 bytes a game). */
function page(games: number, variant = 'a'): Buffer {
  const data = Array.from({ length: games }, (_, i) => ({
    id: i + 1,
    slug: `game-${variant}-${i}`,
    name: `Game ${variant.toUpperCase()} ${i}`,
    provider: `provider-${i % 7}`,
    thumbnail: `https://cdn.example/games/${variant}/${i}.webp`,
  }));
  return Buffer.from(JSON.stringify({ data, total: games, page: 1 }));
}

describe('representations, made once per fill', () => {
  test('a body of 1 KiB and more gets gzip and br variants that decode to it, each with its own strong tag; the size counts every body', async () => {
    const identity = page(200);
    const rep = await makeRepresentation(identity);
    const tag = entityTagOf(identity);
    assert.match(tag, /^"[A-Za-z0-9_-]{22}"$/);
    assert.ok(rep.gzip && rep.br);
    assert.equal(rep.identity.body, identity);
    assert.deepEqual(gunzipSync(rep.gzip.body), identity);
    assert.deepEqual(brotliDecompressSync(rep.br.body), identity);
    assert.ok(rep.br.body.length < rep.gzip.body.length && rep.gzip.body.length < identity.length / 4);
    assert.deepEqual([rep.identity.etag, rep.gzip.etag, rep.br.etag], [tag, `${tag.slice(0, -1)}-gzip"`, `${tag.slice(0, -1)}-br"`]);
    assert.deepEqual([...rep.etags], [rep.identity.etag, rep.gzip.etag, rep.br.etag]);
    assert.deepEqual(rep.br.headers, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': String(rep.br.body.length),
      etag: rep.br.etag,
      'content-encoding': 'br',
    });
    assert.equal(rep.identity.headers['content-encoding'], undefined);
    assert.equal(rep.size, identity.length + rep.gzip.body.length + rep.br.body.length + REPRESENTATION_OVERHEAD_BYTES);
    assert.equal(cachedAnswerSize({ status: 200, body: identity, fetchedAt: 0, representation: rep }), rep.size);
    assert.equal(cachedAnswerSize({ status: 200, body: identity, fetchedAt: 0 }), identity.length + 64);
    assert.equal(rep.select('gzip, deflate, br'), rep.br);
    assert.equal(rep.select('gzip'), rep.gzip);
    assert.equal(rep.select(undefined), rep.identity);
  });

  test('the same bytes give the same tag; other bytes another', async () => {
    assert.equal(entityTagOf(Buffer.from('{}')), '"RBNvo1WzZ4oRRq0W9-hknp"');
    assert.equal((await makeRepresentation(page(50))).identity.etag, (await makeRepresentation(page(50))).identity.etag);
    assert.notEqual(entityTagOf(page(50)), entityTagOf(page(50, 'b')));
  });

  test('a body under 1 KiB is not compressed; a variant not smaller than the body is dropped', async () => {
    const tiny = Buffer.from(JSON.stringify({ data: [{ slug: 'x'.repeat(MIN_COMPRESSED_BYTES - 40) }] }));
    assert.ok(tiny.length < MIN_COMPRESSED_BYTES);
    const small = await makeRepresentation(tiny);
    assert.equal(small.gzip, undefined);
    assert.equal(small.br, undefined);
    assert.deepEqual([...small.etags], [entityTagOf(tiny)]);
    assert.equal(small.select('br, gzip'), small.identity);
    assert.equal(small.size, tiny.length + REPRESENTATION_OVERHEAD_BYTES);
    // Random bytes do not compress: gzip's framing makes them longer, so that variant is dropped.
    const noise = randomBytes(4096);
    const incompressible = await makeRepresentation(noise);
    assert.equal(incompressible.gzip, undefined);
    if (incompressible.br) assert.ok(incompressible.br.body.length < noise.length);
    assert.equal(incompressible.select('gzip'), incompressible.identity);
  });
});

/** An answer read through `node:http`: the bytes as sent, not decoded. */
interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

function get(base: string, path: string, headers: Record<string, string> = {}, method = 'GET', body?: string): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${base}${path}`, { method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** The identity bytes of an answer, decoded as its `Content-Encoding` says; checks `Content-Length` first. */
function decoded(res: RawResponse): Buffer {
  assert.equal(res.headers['content-length'], String(res.body.length), 'Content-Length is the length of the bytes sent');
  const coding = res.headers['content-encoding'];
  if (coding === 'br') return brotliDecompressSync(res.body);
  if (coding === 'gzip') return gunzipSync(res.body);
  assert.equal(coding, undefined);
  return res.body;
}

const {
  upstream,
  proxies: [shared, forward, shortLived],
} = useProxiesWithRecorder([
  { env: { CATALOGUE_CACHE_TTL_MS: '600000' } },
  { env: { CATALOGUE_CACHE_TTL_MS: '600000', CATALOGUE_FOR_SESSIONS: 'forward' } },
  { env: { CATALOGUE_CACHE_TTL_MS: '100' } },
]);

const LIST = '/api/games/list?category=slots&page=1';
const TOP_WINS = '/api/games/top-wins';
/** What the upstream answers to the list now (a test may change it). */
let listBody: Buffer;
const TINY = Buffer.from('{"data":[{"slug":"g1","win":120}]}');

beforeEach(() => {
  for (const proxy of [shared, forward, shortLived]) for (const cache of proxy.app.deps.caches.values()) cache.clear();
  listBody = page(300);
  upstream.on('GET', '/casino-games/list/', (_rec, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(listBody);
  });
  upstream.on('GET', '/bff/games/top-wins-dl', (_rec, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(TINY);
  });
});

const callsToList = () => upstream.requests.filter((r) => r.path === '/casino-games/list/').length;
const tagOf = (body: Buffer, suffix = '') => `${entityTagOf(body).slice(0, -1)}${suffix}"`;

describe('cached catalogue answers over real sockets', () => {
  test('identity without Accept-Encoding: the upstream bytes, a strong ETag of them, Cache-Control, Vary, Content-Type and Content-Length', async () => {
    const res = await get(shared.url, LIST);
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, listBody);
    assert.equal(res.headers['content-length'], String(listBody.length));
    assert.equal(res.headers['content-encoding'], undefined);
    assert.equal(res.headers['content-type'], 'application/json; charset=utf-8');
    assert.equal(res.headers.etag, tagOf(listBody));
    assert.equal(res.headers['cache-control'], 'public, max-age=30');
    assert.equal(res.headers.vary, 'Accept-Encoding');
  });

  test('br and gzip bodies decode to exactly the identity body, with their own tags and a right Content-Length', async () => {
    const cases: readonly [acceptEncoding: string, coding: string | undefined, suffix: string][] = [
      ['gzip, deflate, br, zstd', 'br', '-br'],
      ['br', 'br', '-br'],
      ['gzip, deflate', 'gzip', '-gzip'],
      ['gzip;q=1.0, br;q=0.5', 'gzip', '-gzip'],
      ['br;q=0, gzip', 'gzip', '-gzip'],
      ['br;q=0, *', 'gzip', '-gzip'],
      ['gzip;q=0, br;q=0', undefined, ''],
      ['gzip;q=0.5, identity', undefined, ''],
      ['deflate', undefined, ''],
      ['', undefined, ''],
    ];
    for (const [acceptEncoding, coding, suffix] of cases) {
      const res = await get(shared.url, LIST, { 'accept-encoding': acceptEncoding });
      assert.equal(res.status, 200, acceptEncoding);
      assert.equal(res.headers['content-encoding'], coding, acceptEncoding);
      assert.deepEqual(decoded(res), listBody, acceptEncoding);
      if (coding) assert.ok(res.body.length < listBody.length / 4, `${acceptEncoding}: compressed`);
      assert.equal(res.headers.etag, tagOf(listBody, suffix), acceptEncoding);
      assert.equal(res.headers.vary, 'Accept-Encoding', acceptEncoding);
      assert.equal(res.headers['cache-control'], 'public, max-age=30', acceptEncoding);
    }
    assert.equal(callsToList(), 1, 'every coding from the one fill');
  });

  test('a matching If-None-Match answers 304 without a body, with the ETag of the variant that would have been sent, Cache-Control and Vary only', async () => {
    const identityTag = tagOf(listBody);
    const brTag = tagOf(listBody, '-br');
    const gzipTag = tagOf(listBody, '-gzip');
    const cases: readonly [ifNoneMatch: string, acceptEncoding: string | undefined, etag: string][] = [
      [identityTag, undefined, identityTag],
      [identityTag, 'gzip, deflate, br', brTag],
      [`"other", ${identityTag}`, undefined, identityTag],
      [`W/${identityTag}`, undefined, identityTag],
      ['*', 'gzip', gzipTag],
      [brTag, 'gzip, deflate, br', brTag],
      [`W/${brTag}`, 'br', brTag],
      [brTag, undefined, identityTag],
      [gzipTag, 'gzip', gzipTag],
    ];
    await get(shared.url, LIST);
    for (const [ifNoneMatch, acceptEncoding, etag] of cases) {
      const headers: Record<string, string> = { 'if-none-match': ifNoneMatch };
      if (acceptEncoding !== undefined) headers['accept-encoding'] = acceptEncoding;
      const res = await get(shared.url, LIST, headers);
      const label = `${ifNoneMatch} / ${String(acceptEncoding)}`;
      assert.equal(res.status, 304, label);
      assert.equal(res.body.length, 0, label);
      assert.equal(res.headers.etag, etag, label);
      assert.equal(res.headers['cache-control'], 'public, max-age=30', label);
      assert.equal(res.headers.vary, 'Accept-Encoding', label);
      for (const name of ['content-type', 'content-encoding', 'content-length'])
        assert.equal(res.headers[name], undefined, `${label}: no ${name}`);
    }
    assert.equal(callsToList(), 1);
  });

  test('a non-matching If-None-Match answers 200 with the body', async () => {
    const other = tagOf(page(300, 'b'));
    for (const ifNoneMatch of ['"nope"', `W/${other}`, `${other}, "x"`, tagOf(listBody).slice(1, -1), `"${tagOf(listBody).slice(2)}`]) {
      const res = await get(shared.url, LIST, { 'if-none-match': ifNoneMatch, 'accept-encoding': 'gzip' });
      assert.equal(res.status, 200, ifNoneMatch);
      assert.equal(res.headers.etag, tagOf(listBody, '-gzip'), ifNoneMatch);
      assert.deepEqual(decoded(res), listBody, ifNoneMatch);
    }
  });

  test('HEAD answers the 200 headers without a body; POST /api/games/search is compressed and tagged but ignores If-None-Match', async () => {
    const head = await get(shared.url, LIST, { 'accept-encoding': 'br', 'if-none-match': tagOf(listBody) }, 'HEAD');
    assert.equal(head.status, 200);
    assert.equal(head.body.length, 0);
    assert.equal(head.headers['content-encoding'], 'br');
    assert.equal(head.headers.etag, tagOf(listBody, '-br'));
    const brLength = Number(head.headers['content-length']);
    assert.ok(brLength > 0 && brLength < listBody.length / 4);

    const json = JSON.stringify({ categories: ['slots'], page: 1 });
    const post = await get(
      shared.url,
      '/api/games/search',
      {
        'content-type': 'application/json',
        'accept-encoding': 'gzip',
        'if-none-match': tagOf(listBody, '-gzip'),
      },
      'POST',
      json,
    );
    assert.equal(post.status, 200);
    assert.equal(post.headers['content-encoding'], 'gzip');
    assert.equal(post.headers.etag, tagOf(listBody, '-gzip'));
    assert.equal(post.headers.vary, 'Accept-Encoding');
    assert.deepEqual(decoded(post), listBody);
    assert.equal(callsToList(), 1, 'the search is the same page of the list');
  });

  test('a tiny body is not compressed, yet tagged and revalidated', async () => {
    const res = await get(shared.url, TOP_WINS, { 'accept-encoding': 'gzip, deflate, br' });
    assert.equal(res.status, 200);
    assert.equal(res.headers['content-encoding'], undefined);
    assert.deepEqual(res.body, TINY);
    assert.equal(res.headers['content-length'], String(TINY.length));
    assert.equal(res.headers.etag, tagOf(TINY));
    assert.equal(res.headers.vary, 'Accept-Encoding');
    const again = await get(shared.url, TOP_WINS, { 'accept-encoding': 'br', 'if-none-match': tagOf(TINY) });
    assert.equal(again.status, 304);
    assert.equal(again.headers.etag, tagOf(TINY));
  });

  test('a session changes nothing with CATALOGUE_FOR_SESSIONS=shared: the same tag and variant', async () => {
    const jwt = fakeJwt();
    const res = await get(shared.url, LIST, { 'accept-encoding': 'br', cookie: `access_token=${jwt}` });
    assert.equal(res.status, 200);
    assert.equal(res.headers['content-encoding'], 'br');
    assert.equal(res.headers.etag, tagOf(listBody, '-br'));
    assert.deepEqual(decoded(res), listBody);
    const revalidated = await get(shared.url, LIST, {
      'accept-encoding': 'br',
      'if-none-match': tagOf(listBody, '-br'),
      cookie: `access_token=${jwt}`,
    });
    assert.equal(revalidated.status, 304);
  });

  test('a session token found in the cached bytes falls back to the redacting identity answer: no ETag, no compression', async () => {
    const jwt = fakeJwt({ sub: 'reflected' });
    listBody = Buffer.from(JSON.stringify({ data: JSON.parse(page(50).toString()).data, note: jwt }));
    const res = await get(shared.url, LIST, { 'accept-encoding': 'br, gzip', cookie: `access_token=${jwt}` });
    assert.equal(res.status, 200);
    assert.equal(res.headers['content-encoding'], undefined);
    assert.equal(res.headers.etag, undefined);
    assert.equal(res.headers['cache-control'], 'public, max-age=30');
    assert.equal(res.headers.vary, 'Accept-Encoding');
    const text = res.body.toString();
    assert.ok(!text.includes(jwt));
    assert.equal(JSON.parse(text).note, '[redacted]');
    // Without that session, the same entry is answered from its variants.
    const anonymous = await get(shared.url, LIST, { 'accept-encoding': 'br, gzip' });
    assert.equal(anonymous.headers['content-encoding'], 'br');
    assert.equal(anonymous.headers.etag, tagOf(listBody, '-br'));
    assert.equal(callsToList(), 1);
  });

  test('CATALOGUE_FOR_SESSIONS=forward with a session: no compression, no ETag, no 304; without one: Vary names Cookie and Accept-Encoding', async () => {
    const jwt = fakeJwt();
    for (let i = 0; i < 2; i++) {
      const res = await get(forward.url, LIST, {
        'accept-encoding': 'gzip, deflate, br',
        'if-none-match': tagOf(listBody),
        cookie: `access_token=${jwt}`,
      });
      assert.equal(res.status, 200);
      assert.equal(res.headers['content-encoding'], undefined);
      assert.equal(res.headers.etag, undefined);
      assert.equal(res.headers['cache-control'], 'no-store');
      assert.equal(res.headers.vary, undefined);
      assert.deepEqual(res.body, listBody);
    }
    assert.equal(callsToList(), 2, 'forwarded each time');
    const anonymous = await get(forward.url, LIST, { 'accept-encoding': 'gzip, deflate, br' });
    assert.equal(anonymous.headers['content-encoding'], 'br');
    assert.equal(anonymous.headers.etag, tagOf(listBody, '-br'));
    assert.equal(anonymous.headers.vary, 'Cookie, Accept-Encoding');
    const notModified = await get(forward.url, LIST, { 'if-none-match': tagOf(listBody, '-br') });
    assert.equal(notModified.status, 304);
    assert.equal(notModified.headers.vary, 'Cookie, Accept-Encoding');
    assert.equal(notModified.headers.etag, tagOf(listBody));
  });

  test('the ETag changes when the upstream catalogue changes and the cache refills', async () => {
    const first = await get(shortLived.url, LIST, { 'accept-encoding': 'br' });
    const oldTag = tagOf(listBody, '-br');
    assert.equal(first.headers.etag, oldTag);
    assert.equal((await get(shortLived.url, LIST, { 'accept-encoding': 'br', 'if-none-match': oldTag })).status, 304);
    const before = listBody;
    listBody = page(300, 'b');
    const newTag = tagOf(listBody, '-br');
    assert.notEqual(newTag, oldTag);
    // The time to live is 100 ms: a read after it starts the refresh; the refilled entry follows.
    const deadline = Date.now() + 5_000;
    let res = await get(shortLived.url, LIST, { 'accept-encoding': 'br', 'if-none-match': oldTag });
    while (res.headers.etag !== newTag && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      res = await get(shortLived.url, LIST, { 'accept-encoding': 'br', 'if-none-match': oldTag });
    }
    assert.equal(res.status, 200, 'the old tag no longer matches');
    assert.equal(res.headers.etag, newTag);
    assert.deepEqual(decoded(res), listBody);
    assert.notDeepEqual(listBody, before);
    assert.equal((await get(shortLived.url, LIST, { 'accept-encoding': 'br', 'if-none-match': newTag })).status, 304);
  });

  test('many requests of one page, in every coding, make one upstream call', async () => {
    const codings = ['br', 'gzip', '', 'gzip, deflate, br, zstd', 'identity'];
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) => get(shared.url, LIST, { 'accept-encoding': codings[i % codings.length] as string })),
    );
    for (const res of answers) {
      assert.equal(res.status, 200);
      assert.deepEqual(decoded(res), listBody);
    }
    const revalidations = await Promise.all(Array.from({ length: 10 }, () => get(shared.url, LIST, { 'if-none-match': tagOf(listBody) })));
    for (const res of revalidations) assert.equal(res.status, 304);
    assert.equal(callsToList(), 1);
  });

  test('stats-batch and by-slugs still read the cached entries (now with their variants)', async () => {
    const stats = Buffer.from('{"slug":"g1","rtp":96.5}');
    upstream.on('GET', '/bff/games/statistics-dl', (_rec, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(stats);
    });
    const read = await get(shared.url, '/api/games/statistics-dl?slug=g1', { 'accept-encoding': 'br' });
    assert.equal(read.headers.etag, tagOf(stats));
    const batch = await get(
      shared.url,
      '/api/games/stats-batch',
      { 'content-type': 'application/json' },
      'POST',
      JSON.stringify({ slugs: ['g1', 'g2'] }),
    );
    assert.equal(batch.status, 200);
    assert.deepEqual(JSON.parse(batch.body.toString()), { data: { g1: { slug: 'g1', rtp: 96.5 } }, missing: ['g2'] });
    assert.equal(batch.headers.etag, undefined, 'not a cached answer');

    // by-slugs: the index finds nothing here, so each slug is read through the cached detail.
    const detail = Buffer.from(JSON.stringify({ data: { slug: 'g9', name: 'Nine', notes: 'x'.repeat(2_000) } }));
    upstream.on('GET', '/casino-games', (_rec, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(detail);
    });
    for (let i = 0; i < 2; i++) {
      const bySlugs = await get(shared.url, '/api/games/by-slugs?slugs=g9,zz', { 'accept-encoding': 'br' });
      assert.equal(bySlugs.status, 200);
      assert.equal(bySlugs.headers['content-encoding'], undefined);
      assert.deepEqual(JSON.parse(bySlugs.body.toString()), {
        data: [{ slug: 'g9', name: 'Nine', notes: 'x'.repeat(2_000) }],
        missing: ['zz'],
      });
    }
    assert.equal(
      upstream.requests.filter((r) => r.path === '/casino-games' && r.query === 'slug=g9').length,
      1,
      'the detail from its cached entry the second time',
    );
  });
});

describe('two instances sharing Redis', { skip: HAVE_REDIS ? false : 'redis-server is not installed' }, () => {
  test('the second instance answers the shared entry with the same tags and its own variants; the BFF is called once', async () => {
    const body = page(200, 'r');
    const fleet = await startRedisFleet(2, { CATALOGUE_CACHE_TTL_MS: '600000' }, (up) =>
      up.on('GET', '/casino-games/list/', (_rec, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(body);
      }),
    );
    try {
      const [a, b] = fleet.proxies as readonly [TestProxy, TestProxy];
      const first = await get(a.url, LIST, { 'accept-encoding': 'br' });
      const second = await get(b.url, LIST, { 'accept-encoding': 'br' });
      for (const res of [first, second]) {
        assert.equal(res.status, 200);
        assert.equal(res.headers.etag, tagOf(body, '-br'));
        assert.deepEqual(decoded(res), body);
      }
      assert.equal((await get(b.url, LIST, { 'if-none-match': first.headers.etag as string, 'accept-encoding': 'gzip' })).status, 304);
      assert.equal(fleet.upstream.requests.filter((r) => r.path === '/casino-games/list/').length, 1);
    } finally {
      await fleet.close();
    }
  });
});
