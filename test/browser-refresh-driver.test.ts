/**
 * The refresh driver (packages/browser/src/browser/refresh-driver.ts) with the real proxy client over a fake fetch,
 * a fake clock and shared storage standing for several tabs: refresh when due, one refresh across
 * tabs (Web Locks and the localStorage lease), back-off after failures, stale in-progress marks,
 * forced logout on a session-ending refresh failure, and the BroadcastChannel message.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  type ChannelLike,
  createProxyClient,
  type KeyValueStorage,
  type LockManagerLike,
  leaseLock,
  markRefreshStarted,
  markTokenSaved,
  memoryStorage,
  noLock,
  initialRefreshState,
  REFRESH_INTERVAL_MS,
  type RefreshDriver,
  type RefreshLock,
  serializeRefreshState,
  startRefreshDriver,
  STORAGE_KEYS,
  webLocksLock,
} from '../packages/browser/src/browser/index.js';

const T0 = Date.UTC(2026, 0, 1, 8, 0, 0);
const S = 1000;
const LOGIN_OK = { expires_in: 25200, user: { id: 1001 }, userInfo: {} };

/** A fake proxy shared by all tabs: login always works; refresh answers with `refreshAnswer`. */
function fakeProxy() {
  const state = {
    refreshCalls: 0,
    logoutCalls: 0,
    beacons: 0,
    refreshAnswer: (): Response => new Response(JSON.stringify({ ok: true }), { status: 200 }),
    refreshDelayMs: 20,
  };
  const fetchImpl = (async (input: RequestInfo | URL) => {
    const url = String(input);
    if (url.endsWith('/api/auth/login')) return new Response(JSON.stringify(LOGIN_OK), { status: 200 });
    if (url.endsWith('/api/auth/logout')) {
      state.logoutCalls++;
      return new Response('{"ok":true}', { status: 200 });
    }
    if (url.endsWith('/api/logs/auth-logout')) {
      state.beacons++;
      return new Response(null, { status: 204 });
    }
    if (url.endsWith('/api/auth/refresh')) {
      state.refreshCalls++;
      await new Promise((resolve) => setTimeout(resolve, state.refreshDelayMs));
      return state.refreshAnswer();
    }
    return new Response('{}', { status: 200 });
  }) as typeof fetch;
  return { state, fetch: fetchImpl };
}

interface Tab {
  client: ReturnType<typeof createProxyClient>;
  driver: RefreshDriver;
  forced: string[];
}

function openTab(
  proxy: ReturnType<typeof fakeProxy>,
  storage: KeyValueStorage,
  clock: { now: number },
  lock: RefreshLock = noLock,
  channel: ChannelLike | null = null,
): Tab {
  const forced: string[] = [];
  const client = createProxyClient({
    fetch: proxy.fetch,
    sendBeacon: null,
    storage,
    now: () => clock.now,
    pathname: () => '/',
    userAgent: 'test',
    onForcedLogout: (ref) => forced.push(ref),
  });
  const driver = startRefreshDriver({ client, storage, lock, channel, interval: 0, now: () => clock.now, listenToNavigation: false });
  return { client, driver, forced };
}

const tick = (ms = 0) => new Promise((resolve) => setTimeout(resolve, ms));

/** A Web Locks stand-in: `ifAvailable` gets `null` while the name is held. */
function fakeLocks(): LockManagerLike & { held: Set<string> } {
  const held = new Set<string>();
  return {
    held,
    async request(name, options, callback) {
      if (held.has(name)) {
        assert.equal(options.ifAvailable, true);
        return callback(null);
      }
      held.add(name);
      try {
        return await callback({ name });
      } finally {
        held.delete(name);
      }
    },
  };
}

describe('refresh driver: one tab', () => {
  test('a login records the saved time; not due at 5:59:59, refreshed at 6:00:01, then a new period', async () => {
    const proxy = fakeProxy();
    const storage = memoryStorage();
    const clock = { now: T0 };
    const tab = openTab(proxy, storage, clock);
    await tab.client.auth.login({ body: { login: 'demo@example.com', password: 'Demo#2026' } });
    assert.equal(tab.driver.state.tokenSavedAt, T0);
    assert.ok(!(storage.getItem(STORAGE_KEYS.refreshState) ?? '').includes('token"'), 'no token in storage');
    clock.now = T0 + REFRESH_INTERVAL_MS - S;
    assert.equal(await tab.driver.check(), 'not-due');
    clock.now = T0 + REFRESH_INTERVAL_MS + S;
    assert.equal(await tab.driver.check(), 'refreshed');
    assert.equal(proxy.state.refreshCalls, 1);
    assert.equal(tab.driver.state.tokenSavedAt, T0 + REFRESH_INTERVAL_MS + S);
    assert.equal(await tab.driver.check(), 'not-due');
    tab.driver.stop();
  });

  test('concurrent checks in one tab start one refresh', async () => {
    const proxy = fakeProxy();
    const clock = { now: T0 };
    const tab = openTab(proxy, memoryStorage(), clock);
    await tab.client.auth.login({ body: { login: 'demo@example.com', password: 'Demo#2026' } });
    clock.now += REFRESH_INTERVAL_MS;
    const outcomes = await Promise.all([tab.driver.check(), tab.driver.check(), tab.driver.check()]);
    assert.equal(proxy.state.refreshCalls, 1);
    assert.equal(outcomes[0], 'refreshed');
    assert.ok(
      outcomes.slice(1).every((o) => o === 'busy' || o === 'not-due'),
      outcomes.join(', '),
    );
    tab.driver.stop();
  });

  test('a failed refresh retries after 30 s, then 60 s', async () => {
    const proxy = fakeProxy();
    proxy.state.refreshAnswer = () => new Response(JSON.stringify({ ok: false, error: 'upstream_timeout', detail: 'x' }), { status: 504 });
    const clock = { now: T0 };
    const tab = openTab(proxy, memoryStorage(), clock);
    await tab.client.auth.login({ body: { login: 'demo@example.com', password: 'Demo#2026' } });
    clock.now += REFRESH_INTERVAL_MS;
    assert.equal(await tab.driver.check(), 'failed');
    assert.equal(tab.driver.state.failures, 1);
    assert.equal(tab.forced.length, 0, 'a 504 never ends the session');
    clock.now += 29 * S;
    assert.equal(await tab.driver.check(), 'not-due');
    clock.now += S;
    assert.equal(await tab.driver.check(), 'failed');
    clock.now += 59 * S;
    assert.equal(await tab.driver.check(), 'not-due');
    proxy.state.refreshAnswer = () => new Response('{"ok":true}', { status: 200 });
    clock.now += S;
    assert.equal(await tab.driver.check(), 'refreshed');
    assert.equal(tab.driver.state.failures, 0);
    assert.equal(proxy.state.refreshCalls, 3);
    tab.driver.stop();
  });

  test('a session-ending 401 on the refresh forces the logout and resets the state', async () => {
    const proxy = fakeProxy();
    proxy.state.refreshAnswer = () => new Response(JSON.stringify({ reason: 'token_expired' }), { status: 401 });
    const clock = { now: T0 };
    const tab = openTab(proxy, memoryStorage(), clock);
    await tab.client.auth.login({ body: { login: 'demo@example.com', password: 'Demo#2026' } });
    clock.now += REFRESH_INTERVAL_MS;
    assert.equal(await tab.driver.check(), 'failed');
    assert.deepEqual(tab.forced, ['EP0704-EM0003']);
    assert.equal(proxy.state.logoutCalls, 1);
    assert.equal(proxy.state.beacons, 1, 'beacon by fetch keepalive (no sendBeacon here)');
    assert.deepEqual(tab.driver.state, initialRefreshState());
    clock.now += REFRESH_INTERVAL_MS;
    assert.equal(await tab.driver.check(), 'not-due');
    tab.driver.stop();
  });

  test('a stale in-progress mark (a tab closed mid-refresh) expires after 2 minutes', async () => {
    const proxy = fakeProxy();
    const storage = memoryStorage();
    storage.setItem(STORAGE_KEYS.session, '1');
    const saved = markTokenSaved(initialRefreshState(), T0);
    storage.setItem(STORAGE_KEYS.refreshState, serializeRefreshState(markRefreshStarted(saved, T0 + REFRESH_INTERVAL_MS)));
    const clock = { now: T0 + REFRESH_INTERVAL_MS + 60 * S };
    const tab = openTab(proxy, storage, clock);
    assert.equal(await tab.driver.check(), 'not-due');
    clock.now = T0 + REFRESH_INTERVAL_MS + 120 * S;
    assert.equal(await tab.driver.check(), 'refreshed');
    tab.driver.stop();
  });

  test('a session known to the client but no stored state: the saved time is taken as now; no session: the state is cleared', () => {
    const proxy = fakeProxy();
    const storage = memoryStorage();
    storage.setItem(STORAGE_KEYS.session, '1');
    const clock = { now: T0 };
    const a = openTab(proxy, storage, clock);
    assert.equal(a.driver.state.tokenSavedAt, T0);
    a.driver.stop();
    storage.removeItem(STORAGE_KEYS.session);
    const b = openTab(proxy, storage, clock);
    assert.equal(b.driver.state.tokenSavedAt, null);
    b.driver.stop();
  });

  test('stop() ends checks; the interval timer checks on its own', async () => {
    const proxy = fakeProxy();
    proxy.state.refreshDelayMs = 0;
    const storage = memoryStorage();
    const clock = { now: T0 };
    const client = createProxyClient({ fetch: proxy.fetch, sendBeacon: null, storage, now: () => clock.now });
    await client.auth.login({ body: { login: 'demo@example.com', password: 'Demo#2026' } });
    const driver = startRefreshDriver({
      client,
      storage,
      lock: noLock,
      channel: null,
      interval: 5,
      now: () => clock.now,
      listenToNavigation: false,
    });
    clock.now += REFRESH_INTERVAL_MS;
    for (let i = 0; i < 50 && proxy.state.refreshCalls === 0; i++) await tick(5);
    assert.equal(proxy.state.refreshCalls, 1);
    driver.stop();
    clock.now += 2 * REFRESH_INTERVAL_MS;
    assert.equal(await driver.check(), 'stopped');
    await tick(20);
    assert.equal(proxy.state.refreshCalls, 1);
  });
});

describe('refresh driver: several tabs do not refresh at once', () => {
  for (const kind of ['web-locks', 'lease'] as const) {
    test(`three tabs checking together make one refresh (${kind})`, async () => {
      const proxy = fakeProxy();
      const storage = memoryStorage();
      const clock = { now: T0 };
      const locks = fakeLocks();
      const lockFor = (i: number): RefreshLock =>
        kind === 'web-locks' ? webLocksLock(locks) : leaseLock({ storage, owner: `tab-${i}`, settleMs: 5, now: () => clock.now });
      const tabs = [0, 1, 2].map((i) => openTab(proxy, storage, clock, lockFor(i)));
      assert.equal(tabs[0]?.driver.lockKind, kind);
      await tabs[0]?.client.auth.login({ body: { login: 'demo@example.com', password: 'Demo#2026' } });
      clock.now += REFRESH_INTERVAL_MS + S;
      const outcomes = await Promise.all(tabs.map((t) => t.driver.check()));
      assert.equal(proxy.state.refreshCalls, 1, `outcomes ${outcomes.join(', ')}`);
      assert.equal(outcomes.filter((o) => o === 'refreshed').length, 1);
      for (const t of tabs) assert.equal(t.driver.state.tokenSavedAt, clock.now, 'every tab sees the new saved time');
      assert.deepEqual(await Promise.all(tabs.map((t) => t.driver.check())), ['not-due', 'not-due', 'not-due']);
      assert.equal(storage.getItem(STORAGE_KEYS.refreshLease), null, 'the lease is released');
      for (const t of tabs) t.driver.stop();
    });
  }

  test('a live lease of another tab means busy; an expired one is taken over', async () => {
    const storage = memoryStorage();
    const clock = { now: T0 };
    storage.setItem(STORAGE_KEYS.refreshLease, JSON.stringify({ owner: 'other', until: T0 + 10 * S }));
    const lock = leaseLock({ storage, owner: 'me', settleMs: 0, now: () => clock.now });
    assert.deepEqual(await lock.tryRun(async () => 1), { acquired: false });
    clock.now += 11 * S;
    assert.deepEqual(await lock.tryRun(async () => 1), { acquired: true, value: 1 });
  });

  test('the BroadcastChannel message shares the new saved time with a tab whose storage is not shared', async () => {
    const proxy = fakeProxy();
    const clock = { now: T0 };
    const channels: ChannelLike[] = [];
    const makeChannel = (): ChannelLike => {
      const ch: ChannelLike = {
        onmessage: null,
        postMessage(message) {
          for (const other of channels) if (other !== ch) other.onmessage?.({ data: structuredClone(message) });
        },
        close() {},
      };
      channels.push(ch);
      return ch;
    };
    const a = openTab(proxy, memoryStorage(), clock, noLock, makeChannel());
    const b = openTab(proxy, memoryStorage(), clock, noLock, makeChannel());
    await a.client.auth.login({ body: { login: 'demo@example.com', password: 'Demo#2026' } });
    assert.equal(b.driver.state.tokenSavedAt, T0);
    clock.now += REFRESH_INTERVAL_MS;
    assert.equal(await a.driver.check(), 'refreshed');
    assert.equal(b.driver.state.tokenSavedAt, clock.now);
    assert.equal(await b.driver.check(), 'not-due');
    await a.client.auth.logout();
    assert.equal(b.driver.state.tokenSavedAt, null);
    a.driver.stop();
    b.driver.stop();
  });
});
