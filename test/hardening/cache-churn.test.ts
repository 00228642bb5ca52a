/**
 * Hardening row 8, caches under churn (spec 4.1 "Profile caching rule", spec 8): distinct tokens
 * through `GET /api/auth/profile` (100,000 in the full run).
 *
 * Pass: the profile cache never holds more than 100 entries (sampled every millisecond and after each
 * batch; every registered cache is reported); the heap after GC grows by less than 10 MB; every distinct
 * token costs exactly one upstream read; an entry is served within its 10 s and never after (the
 * bounded run moves lru-cache's clock, `performance.now`; the full run also waits the 10 s); logout
 * evicts at once; a logout, an evict or a clear of every cache during reads in flight fails none of them.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { PROFILE_MAX_ENTRIES, PROFILE_TTL_MS } from '../../src/session/profile-cache.js';
import { fakeJwt } from '../helpers/recording-upstream.js';
import { keepAliveAgent, rawRequest, runPool } from './helpers/client.js';
import { FULL, Figures, scaled } from './helpers/figures.js';
import { type Harness, startHarness } from './helpers/harness.js';
import { good, type Handler } from './helpers/upstream.js';

const figures = new Figures('cache-churn', 8, 'Caches under churn');
const TOKENS = scaled(100_000, 3_000);
const HEAP_LIMIT = 10 * 1024 * 1024;
let h: Harness;
const agent = keepAliveAgent(16);

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

before(async () => {
  // warn level: no line per request, so that the captured log does not grow with the churn
  h = await startHarness({ LOG_LEVEL: 'warn' }, { keepSeen: false });
});
after(async () => {
  agent.destroy();
  await h.close();
  figures.write();
});

function profile(token: string) {
  return rawRequest(h.base, { method: 'GET', path: '/api/auth/profile', headers: { cookie: h.cookie(token) }, agent, timeoutMs: 10_000 });
}

function heapAfterGc(): number {
  for (let i = 0; i < 3; i++) gc();
  return process.memoryUsage().heapUsed;
}

/** Moves `performance.now` (lru-cache's clock) by `ms` while `fn` runs. */
async function withClockAhead<T>(ms: number, fn: () => Promise<T>): Promise<T> {
  const original = performance.now.bind(performance);
  performance.now = () => original() + ms;
  await new Promise((r) => setTimeout(r, 5)); // lru-cache keeps "now" for 1 ms
  try {
    return await fn();
  } finally {
    performance.now = original;
    await new Promise((r) => setTimeout(r, 5));
  }
}

test(`row 8: ${TOKENS} distinct tokens through the profile route: at most ${PROFILE_MAX_ENTRIES} entries, bounded heap, one read each`, async () => {
  await figures.run('churn', async () => {
    const deps = h.proxy.app.deps;
    let maxProfile = 0;
    const maxOther = new Map<string, number>();
    const sample = () => {
      maxProfile = Math.max(maxProfile, deps.profileCache.size);
      for (const [name, cache] of deps.caches) maxOther.set(name, Math.max(maxOther.get(name) ?? 0, cache.size));
      maxOther.set('refresh', Math.max(maxOther.get('refresh') ?? 0, deps.refreshCache.size));
    };
    const sampler = setInterval(sample, 1);

    const run = async (count: number, label: string) => {
      const BATCH = 2_000;
      let failed = 0;
      for (let start = 0; start < count; start += BATCH) {
        const jobs = Array.from({ length: Math.min(BATCH, count - start) }, (_, i) => async () => {
          const res = await profile(fakeJwt({ sub: '7', churn: `${label}-${start + i}` }));
          figures.inputs++;
          figures.status(res.status || res.error || 'no answer');
          if (res.status !== 200) failed++;
        });
        await runPool(jobs, 16);
        sample();
      }
      return failed;
    };

    await run(1_000, 'warm');
    const reads0 = h.upstream.total;
    const heapBefore = heapAfterGc();
    const started = Date.now();
    const failed = await run(TOKENS, 'churn');
    const elapsed = Date.now() - started;
    const reads = h.upstream.total - reads0;
    clearInterval(sampler);
    sample();
    const heapAfter = heapAfterGc();
    const growth = heapAfter - heapBefore;
    figures.check(failed === 0, `${failed} churn requests failed`);
    figures.check(maxProfile <= PROFILE_MAX_ENTRIES, `the profile cache held ${maxProfile} entries`);
    figures.check(reads === TOKENS, `${reads} upstream reads for ${TOKENS} distinct tokens`);
    figures.check(growth < HEAP_LIMIT, `heap grew by ${(growth / 1048576).toFixed(1)} MiB after GC`);
    figures.cacheSizes = [
      `profile max ${maxProfile}/${PROFILE_MAX_ENTRIES}`,
      ...[...maxOther].filter(([n]) => n !== 'profile').map(([n, v]) => `${n} max ${v}`),
    ].join(', ');
    figures.memory = `heap ${(heapBefore / 1048576).toFixed(1)} → ${(heapAfter / 1048576).toFixed(1)} MiB after GC (${growth >= 0 ? '+' : ''}${(growth / 1048576).toFixed(2)} MiB)`;
    figures.note(`${TOKENS} tokens in ${elapsed} ms (${Math.round((TOKENS / elapsed) * 1000)}/s), ${reads} upstream reads`);
  });
  assert.equal(figures.failureCount, 0, figures.summary());
});

test('row 8: an entry is served within its 10 s, never after; logout evicts at once', async () => {
  await figures.run('ttl', async () => {
    const reads = () => h.upstream.total;
    const token = fakeJwt({ sub: '7', role: 'ttl' });
    const r0 = reads();
    await profile(token);
    await profile(token);
    figures.check(reads() - r0 === 1, `two reads within the TTL cost ${reads() - r0} upstream reads`);
    await withClockAhead(PROFILE_TTL_MS - 100, async () => {
      await profile(token);
      figures.check(reads() - r0 === 1, `a read at 9.9 s was not served from the cache (${reads() - r0} upstream reads)`);
    });
    await withClockAhead(PROFILE_TTL_MS + 100, async () => {
      await profile(token);
      figures.check(reads() - r0 === 2, `a read at 10.1 s was served from the cache (${reads() - r0} upstream reads)`);
    });
    figures.inputs += 4;
    if (FULL) {
      const waited = fakeJwt({ sub: '7', role: 'ttl-wall-clock' });
      const w0 = reads();
      await profile(waited);
      await new Promise((r) => setTimeout(r, PROFILE_TTL_MS + 200));
      await profile(waited);
      figures.inputs += 2;
      figures.check(reads() - w0 === 2, `after a real ${PROFILE_TTL_MS + 200} ms wait the entry was still served`);
    }

    const session = fakeJwt({ sub: '7', role: 'logout' });
    await profile(session);
    await profile(session);
    const out = await rawRequest(h.base, { method: 'POST', path: '/api/auth/logout', headers: { cookie: h.cookie(session) }, agent });
    figures.check(out.status === 200, `logout answered ${out.status}`);
    const readsBefore = reads();
    await profile(session);
    figures.check(reads() - readsBefore === 1, 'the profile was served from the cache after logout');
    figures.inputs += 4;
    figures.note(
      `TTL ${PROFILE_TTL_MS} ms checked at ${PROFILE_TTL_MS - 100} and ${PROFILE_TTL_MS + 100} ms${FULL ? ' and after a real wait' : ''}; logout evicted at once`,
    );
  });
  assert.equal(figures.failureCount, 0, figures.summary());
});

test('row 8: a logout, an evict or a clear of every cache during reads in flight fails none of them', async () => {
  await figures.run('clear during loads', async () => {
    const slow: Handler = (req, res, seen) => {
      setTimeout(() => good(req, res, seen), 150);
    };
    h.upstream.fault('', slow);
    try {
      // catalogue reads go through the catalogue cache only without a session
      const routes: [string, boolean][] = [
        ['/api/auth/profile', true],
        ['/api/album/bootstrap', true],
        ['/api/games/list', false],
        ['/api/games/top-wins', false],
      ];
      for (const how of ['logout', 'clear every cache'] as const) {
        const token = fakeJwt({ sub: '7', role: `in-flight-${how}` });
        const reads = routes.flatMap(([path, session]) =>
          [0, 1, 2].map(() => rawRequest(h.base, { method: 'GET', path, headers: session ? { cookie: h.cookie(token) } : {}, agent })),
        );
        await new Promise((r) => setTimeout(r, 50));
        if (how === 'logout') {
          await rawRequest(h.base, { method: 'POST', path: '/api/auth/logout', headers: { cookie: h.cookie(token) }, agent });
        } else {
          for (const cache of h.proxy.app.deps.caches.values()) cache.clear();
          h.proxy.app.deps.refreshCache.clear();
        }
        const answers = await Promise.all(reads);
        answers.forEach((a, i) => {
          figures.inputs++;
          figures.status(a.status);
          figures.check(
            a.status === 200,
            `${routes[Math.floor(i / 3)]?.[0]} during a ${how}: ${a.status} ${a.body.toString('utf8').slice(0, 100)}`,
          );
        });
      }
    } finally {
      h.upstream.heal();
    }
    figures.check(h.crashes.length === 0, `uncaught errors: ${h.crashes.slice(0, 3).join('; ')}`);
    const sizes = [...h.proxy.app.deps.caches].map(([name, cache]) => `${name} ${cache.size}`).join(', ');
    figures.note(`caches registered at the end: ${sizes}`);
  });
  assert.equal(figures.failureCount, 0, figures.summary());
});
