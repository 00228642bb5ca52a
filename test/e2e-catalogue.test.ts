/**
 * End to end against the embedded sandbox (`createServer` without `BFF_BASE_URL`): log in with the
 * demo user, browse a category, resolve 20 slugs, start a game, search, vote and favourite, open a
 * sticker pack, claim the daily check-in (a second claim the same day is refused), cashback and
 * attribution; and the 4.11 brand service against the sandbox BFF.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { createServer } from '../src/app.js';
import { readJson } from '../src/upstream/auth-service.js';
import { brandService } from '../src/upstream/brand-service.js';
import { UpstreamService } from '../src/upstream/client.js';
import { PoolRegistry } from '../src/upstream/pools.js';
import { send } from './helpers/recording-upstream.js';

let app: FastifyInstance;
let base: string;
let jwt: string;

before(async () => {
  // The proxy shares the test's process, whose event loop a loaded machine delays: shedding has tests of its own.
  app = await createServer({ NODE_ENV: 'test', LOG_LEVEL: 'silent', LOAD_SHED_EVENT_LOOP_DELAY_MS: '0' });
  base = await app.listen({ port: 0, host: '127.0.0.1' });
  const login = await send(base, 'POST', '/api/auth/login', { json: { login: 'demo@example.com', password: 'Demo#2026' } });
  assert.equal(login.status, 200);
  const cookie = login.headers.get('set-cookie') ?? '';
  jwt = /^access_token=([^;]+)/.exec(cookie)?.[1] ?? '';
  assert.ok(jwt.length > 20, 'the session cookie is set');
});
after(async () => {
  await app.close();
});

const user = () => ({ token: jwt });

describe('casino catalogue end to end', () => {
  let slugs: string[] = [];

  test('browse a category page by page, with and without a session', async () => {
    const first = await send(base, 'GET', '/api/games/category/slots?per_page=12&page=1', user());
    assert.equal(first.status, 200);
    const page1 = first.json as { data: { slug: string; categories: string[] }[]; total: number; last_page: number };
    assert.equal(page1.data.length, 12);
    assert.ok(page1.data.every((g) => g.categories.includes('slots')));
    assert.ok(page1.total >= 60, 'a category of the 500+ game catalogue');
    const second = await send(base, 'GET', '/api/games/category/slots?per_page=12&page=2');
    const page2 = second.json as { data: { slug: string }[] };
    assert.equal(second.headers.get('cache-control'), 'public, max-age=30');
    slugs = [...page1.data, ...page2.data].map((g) => g.slug).slice(0, 20);
    assert.equal(new Set(slugs).size, 20);
    const search = await send(base, 'GET', '/api/games/list?search=golden&per_page=100');
    const found = search.json as { data: { name: string }[]; total: number };
    assert.ok(found.total > 0 && found.data.every((g) => g.name.toLowerCase().includes('golden')));
    const all = await send(base, 'GET', '/api/games/list?per_page=1');
    assert.ok((all.json as { total: number }).total >= 500);
  });

  test('resolve 20 slugs from the assembled index, in order', async () => {
    const res = await send(base, 'GET', `/api/games/by-slugs?slugs=${[...slugs, 'no-such-game'].join(',')}`, user());
    assert.equal(res.status, 200);
    const body = res.json as { data: { slug: string }[]; missing: string[] };
    assert.deepEqual(
      body.data.map((g) => g.slug),
      slugs,
    );
    assert.deepEqual(body.missing, ['no-such-game']);
  });

  test('start a game: a launch URL and no debug data', async () => {
    const res = await send(base, 'GET', `/api/games/start?slug=${slugs[0]}&mode=real&debug=1`, user());
    assert.equal(res.status, 200);
    const body = res.json as Record<string, unknown>;
    assert.match(String(body.url), /^https:\/\/games\.sandbox\.invalid\/launch\//);
    for (const key of ['debug', 'trace_id', 'internal']) assert.equal(body[key], undefined, key);
    assert.ok(!res.text.includes('operator_secret') && !res.text.includes('sandbox-operator-secret'));
    assert.equal((await send(base, 'GET', `/api/games/start?slug=${slugs[0]}`)).status, 401);
  });

  test('statistics, stats-batch, top wins, votes and favourites', async () => {
    assert.equal((await send(base, 'GET', `/api/games/statistics-dl?slug=${slugs[1]}`)).status, 200);
    const batch = await send(base, 'POST', '/api/games/stats-batch', { json: { slugs: [slugs[1], slugs[2]] } });
    const stats = batch.json as { data: Record<string, { data: { rtp: number } }>; missing: string[] };
    assert.equal(typeof stats.data[slugs[1] as string]?.data.rtp, 'number');
    assert.deepEqual(stats.missing, [slugs[2]]);
    const wins = await send(base, 'GET', '/api/games/top-wins');
    assert.ok((wins.json as { data: unknown[] }).data.length > 0);

    const game = ((await send(base, 'GET', `/api/games/by-slugs?slugs=${slugs[3]}`)).json as { data: { id: number }[] }).data[0];
    const id = game?.id as number;
    const voted = await send(base, 'POST', '/api/games/vote', { ...user(), json: { casinoGameId: id, vote: 'up' } });
    assert.deepEqual((voted.json as { data: unknown }).data, { casinoGameId: id, up: 1, down: 0, userVote: 'up' });
    const read = await send(base, 'GET', `/api/games/vote?casinoGameId=${id}`, user());
    assert.equal((read.json as { data: { userVote: string } }).data.userVote, 'up');
    const removed = await send(base, 'DELETE', `/api/games/vote?gameId=${id}`, user());
    assert.equal((removed.json as { data: { userVote: null } }).data.userVote, null);

    const toggled = await send(base, 'PUT', '/api/favorites', { ...user(), json: { slug: slugs[4] } });
    assert.equal((toggled.json as { favorite: boolean }).favorite, true);
    const favorites = await send(base, 'GET', '/api/favorites', user());
    assert.deepEqual(
      (favorites.json as { data: { slug: string }[] }).data.map((g) => g.slug),
      [slugs[4]],
    );
  });

  test('unified search and the sportsbook', async () => {
    const unified = await send(base, 'POST', '/api/search/unified', { json: { search: 'tigers' } });
    const body = unified.json as { casino: unknown; sports: { data: { home: string }[] }; failed: string[] };
    assert.deepEqual(body.failed, []);
    assert.ok(body.sports.data.some((e) => e.home === 'Rio Tigers'));
    const launch = await send(base, 'GET', '/api/sports/launch', user());
    assert.equal(launch.status, 200);
    assert.equal((launch.json as Record<string, unknown>).debug, undefined);
    const event = await send(base, 'GET', '/api/core-sportbook/events/50001');
    assert.equal((event.json as { data: { id: number } }).data.id, 50001);
    const partner = await send(base, 'GET', '/api/sports/partner-b-token', user());
    assert.match(String((partner.json as { token: string }).token), /^pb_/);
  });
});

describe('sticker album end to end', () => {
  test('bootstrap, open a pack, claim the daily check-in once a day', async () => {
    const boot = await send(base, 'GET', '/api/album/bootstrap', user());
    assert.equal(boot.status, 200);
    const state = boot.json as { progress: { packs_available: number; collected: number } };
    const packs = state.progress.packs_available;
    assert.ok(packs > 0);

    const opened = await send(base, 'POST', '/api/album/open-pack', user());
    assert.equal(opened.status, 200);
    const pack = opened.json as { pack: { stickers: unknown[] }; packs_available: number };
    assert.equal(pack.pack.stickers.length, 5);
    assert.equal(pack.packs_available, packs - 1);

    const claim = await send(base, 'POST', '/api/album/checkin?claimType=daily', user());
    assert.equal(claim.status, 200);
    assert.deepEqual((claim.json as { reward: unknown }).reward, { packs: 1 });
    const again = await send(base, 'POST', '/api/album/checkin?claimType=daily', user());
    assert.equal(again.status, 409);
    assert.equal((again.json as { error: string }).error, 'already_claimed_today');

    const featured = await send(base, 'POST', '/api/album/claim-featured', { ...user(), json: { featuredId: 'feat-legend' } });
    assert.equal(featured.status, 200);
    const mission = await send(base, 'POST', '/api/album/mission-type', { ...user(), json: { missionType: 'sportsbook' } });
    assert.equal((mission.json as { missionType: string }).missionType, 'sportsbook');
    const all = await send(base, 'POST', '/api/album/open-all-packs', user());
    assert.equal((all.json as { packs_available: number }).packs_available, 0);
    const none = await send(base, 'POST', '/api/album/open-pack', user());
    assert.equal(none.status, 409);
    const after = await send(base, 'GET', '/api/album/bootstrap', user());
    const checkin = (after.json as { checkin: { daily: { claimed_today: boolean } } }).checkin;
    assert.equal(checkin.daily.claimed_today, true);
  });
});

describe('external services end to end', () => {
  test('cashback verify then send (once), attribution recorded without the session', async () => {
    const verify = await send(base, 'POST', '/api/ftd-cashback/verify', { ...user(), json: {} });
    assert.equal((verify.json as { eligible: boolean }).eligible, true);
    assert.equal((await send(base, 'POST', '/api/ftd-cashback/send-cashback', { ...user(), json: { depositId: 'd-1' } })).status, 200);
    assert.equal((await send(base, 'POST', '/api/ftd-cashback/send-cashback', { ...user(), json: { depositId: 'd-1' } })).status, 409);

    assert.equal(
      (await send(base, 'POST', '/api/tracking/attribution', { ...user(), json: { event: 'first_deposit', value: 50 } })).status,
      200,
    );
    const external = app.sandboxUrls?.ATTRIBUTION_S2S_URL?.replace(/\/attribution\/s2s$/, '') as string;
    const events = (await (await fetch(`${external}/__sandbox/attribution/events`)).json()) as {
      events: { body: Record<string, unknown>; authorization: boolean; cookie: string | null }[];
    };
    const last = events.events.at(-1);
    assert.equal(last?.body.event, 'first_deposit');
    assert.equal(last?.authorization, false);
    assert.equal(last?.cookie, null);
  });
});

describe('spec 4.11 brand service against the sandbox BFF', () => {
  test('typed calls: appearance, features, bookmaker settings, legal term, address, social accounts', async () => {
    const pools = new PoolRegistry(5_000);
    const bffUrl = app.sandboxUrls?.BFF_BASE_URL as string;
    const service = new UpstreamService('BFF_BASE_URL', bffUrl, pools);
    const anonymous = brandService((req) => service.request(req));
    const signedIn = brandService((req) => service.request({ ...req, headers: { authorization: `Bearer ${jwt}` } }));
    try {
      assert.equal(readJson(await anonymous.appearance())?.theme, 'dark');
      assert.equal(readJson(await anonymous.features())?.features?.sportsbook, true);
      assert.deepEqual(readJson(await anonymous.bookmakerSettings({ keys: ['currency'] }))?.settings, { currency: 'BRL' });
      assert.equal(readJson(await anonymous.legalTerm({ type: 'privacy', lang: 'pt-BR' }))?.title, 'Privacy policy');
      assert.equal((await anonymous.legalTerm({ type: 'nope' })).status, 404);
      assert.equal((await anonymous.addressByUser()).status, 401);
      assert.equal(readJson(await signedIn.addressByUser())?.city, 'São Paulo');
      assert.deepEqual(readJson(await signedIn.accountSocial())?.data, []);
      const linked = readJson(await signedIn.linkAccountSocial({ provider: 'google', token: 'demo-google-token' }));
      assert.equal(linked?.data?.[0]?.provider, 'google');
      assert.equal((await signedIn.linkAccountSocial({ provider: 'google', token: 'x' })).status, 409);
      assert.deepEqual(readJson(await signedIn.unlinkAccountSocial('google'))?.data, []);
      assert.equal((await signedIn.unlinkAccountSocial('google')).status, 404);
    } finally {
      await pools.close();
    }
  });
});
