/**
 * The React bindings (packages/react) without a browser: importing them and rendering the provider
 * on a server (react-dom/server, Node has no `window`) works and renders the `unknown` state, with
 * no request made; the profile store shares one request between callers, drops an answer that comes
 * after the session changed, and a hook outside the provider names the provider. The browser
 * behaviour is test/e2e-browser-react.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createElement as h } from 'react';
import { renderToString } from 'react-dom/server';
import { createProxyClient, memoryStorage } from '../packages/browser/src/browser/index.js';
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
