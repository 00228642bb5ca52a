/**
 * The React bindings (packages/react) without a browser: importing them and rendering the provider
 * on a server (react-dom/server, Node has no `window`) works and renders the `unknown` state, with
 * no request made; the first render from the server: `readSession` asks the real proxy's
 * `GET /api/auth/session` (over a socket, the sandbox's login cookie) and `initialSession` makes the
 * server's HTML signed in or out; the profile store shares one request between callers, drops an
 * answer that comes after the session changed, and a hook outside the provider names the provider.
 * The browser behaviour is test/e2e-browser-react.test.ts and test/e2e-browser-session-recovery.test.ts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { createElement as h } from 'react';
import { renderToString } from 'react-dom/server';
import { request } from 'undici';
import { createProxyClient, memoryStorage, readSession, type SessionSnapshot } from '../packages/browser/src/browser/index.js';
import { createServer } from '../src/app.js';
import { ProxySessionProvider, useProfile, useSession } from '../packages/react/src/index.js';
import { ProfileStore } from '../packages/react/src/profile-store.js';

describe('server-side rendering', () => {
  test('no window at import or render: the provider renders the unknown state and asks nothing', () => {
    assert.equal(typeof (globalThis as { window?: unknown }).window, 'undefined');
    const calls: string[] = [];
    const client = createProxyClient({
      storage: memoryStorage(),
      fetch: (async (url: string) => {
        calls.push(url);
        return new Response('{}');
      }) as unknown as typeof fetch,
    });
    function View() {
      const { status } = useSession();
      const { status: profile } = useProfile();
      return h('p', null, `${status}/${profile}`);
    }
    const html = renderToString(h(ProxySessionProvider, { client }, h(View)));
    assert.equal(html, '<p>unknown/idle</p>');
    assert.deepEqual(calls, [], 'effects do not run on a server');
  });

  test('a hook outside the provider names it', () => {
    function Lost() {
      useSession();
      return null;
    }
    assert.throws(() => renderToString(h(Lost)), /inside <ProxySessionProvider/);
  });
});

describe('the first render from the server: readSession and initialSession', () => {
  let proxy: FastifyInstance;
  let base: string;
  before(async () => {
    // The session route under test, not the load shedding of a busy machine.
    proxy = await createServer({ NODE_ENV: 'development', LOG_LEVEL: 'silent', LOAD_SHED_EVENT_LOOP_DELAY_MS: '0' });
    base = await proxy.listen({ port: 0, host: '127.0.0.1' });
  });
  after(async () => {
    await proxy?.close();
  });

  function View() {
    const session = useSession();
    const { status: profile } = useProfile();
    return h('p', null, `${session.status}/${session.expiresAt === null ? '-' : 'exp'}/${profile}`);
  }
  /** The page rendered on a server with a client made there (no requests, memory storage). */
  const render = (initialSession: SessionSnapshot | undefined) =>
    renderToString(h(ProxySessionProvider, { client: createProxyClient({ storage: memoryStorage() }), initialSession }, h(View)));

  test("a logged-in browser's cookies → signedIn with the token's exp, and the HTML is signed in", async () => {
    const login = await request(`${base}/api/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ login: 'demo@example.com', password: 'Demo#2026' }),
    });
    assert.equal(login.statusCode, 200);
    await login.body.dump();
    const setCookie = ([] as string[]).concat(login.headers['set-cookie'] ?? []);
    const session = setCookie.map((c) => c.split(';')[0]).find((c) => c?.startsWith('access_token='));
    assert.ok(session, setCookie.join(' | '));
    const state = await readSession({ baseUrl: base, cookie: `theme=dark; ${session}` });
    assert.equal(state.status, 'signedIn');
    assert.ok(typeof state.expiresAt === 'number' && state.expiresAt > Date.now() / 1000 + 6 * 3600, `expiresAt ${state.expiresAt}`);
    assert.equal(render(state), '<p>signedIn/exp/idle</p>');
  });

  test('no session cookie, a refused one, no proxy: signedOut, signedOut, unknown; the HTML follows', async () => {
    const calls: string[] = [];
    const counting = ((url: string, init?: RequestInit) => {
      calls.push(String(url));
      return fetch(url, init);
    }) as typeof fetch;
    const none = await readSession({ baseUrl: base, cookie: '', fetch: counting });
    assert.deepEqual([none.status, calls.length], ['signedOut', 0], 'no cookie at all: no request');
    assert.equal((await readSession({ baseUrl: base, cookie: 'theme=dark', fetch: counting })).status, 'signedOut');
    assert.equal((await readSession({ baseUrl: base, cookie: 'access_token=not-a-jwt', fetch: counting })).status, 'signedOut');
    assert.deepEqual(calls, [`${base}/api/auth/session`, `${base}/api/auth/session`]);
    const closed = await createServer({ NODE_ENV: 'development', LOG_LEVEL: 'silent' });
    const gone = await closed.listen({ port: 0, host: '127.0.0.1' });
    await closed.close();
    const unknown = await readSession({ baseUrl: gone, cookie: 'access_token=x' });
    assert.equal(unknown.status, 'unknown');
    assert.equal(render(none), '<p>signedOut/-/idle</p>');
    assert.equal(render(unknown), '<p>unknown/-/idle</p>');
    assert.equal(render(undefined), '<p>unknown/-/idle</p>');
  });
});

describe('ProfileStore', () => {
  function fakeClient() {
    const resolvers: ((value: unknown) => void)[] = [];
    const client = {
      auth: {
        profile: () =>
          new Promise((resolve) => {
            resolvers.push(resolve);
          }),
      },
    };
    return { client: client as never, resolvers };
  }

  test('callers during a load share one request; a loaded profile is not asked again; reload asks afresh', async () => {
    const { client, resolvers } = fakeClient();
    const store = new ProfileStore(client);
    const a = store.load();
    const b = store.load();
    assert.equal(resolvers.length, 1);
    resolvers[0]?.({ user: { id: 1 } });
    await Promise.all([a, b]);
    assert.deepEqual(store.state, { status: 'ready', profile: { user: { id: 1 } }, error: null });
    await store.load();
    assert.equal(resolvers.length, 1);
    const again = store.load(true);
    assert.equal(resolvers.length, 2);
    resolvers[1]?.({ user: { id: 2 } });
    await again;
    assert.equal((store.state.profile as { user: { id: number } } | null)?.user.id, 2);
  });

  test('an answer that comes after the session changed is dropped', async () => {
    const { client, resolvers } = fakeClient();
    const store = new ProfileStore(client);
    const load = store.load();
    store.reset();
    resolvers[0]?.({ user: { id: 1 } });
    await load;
    assert.equal(store.state.status, 'idle');
    assert.equal(store.state.profile, null);
  });
});
