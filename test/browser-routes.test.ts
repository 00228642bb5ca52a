/**
 * The browser client's route list (packages/browser/src/browser/routes.ts) against the server's route tables
 * (src/routes, `allRouteTables`), both ways: every non-dev server route has exactly one client row
 * per method with the same path pattern and the same session need, and every client row has its
 * server route. Path parameters compare by position, not name (`:slug` = `{slug}` = `{id}`).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type ClientRoute, matchRoute, ROUTES } from '../packages/browser/src/browser/routes.js';
import { allRouteTables } from '../src/routes/index.js';
import type { RouteSpec } from '../src/routes/route.js';

/** `/api/games/category/:slug` and `/api/games/category/{slug}` → `/api/games/category/{}`. */
function pattern(path: string): string {
  return path
    .split('/')
    .map((seg) => (seg.startsWith(':') || /^\{[^}]+\}$/.test(seg) ? '{}' : seg))
    .join('/');
}

interface Entry {
  method: string;
  path: string;
  session: boolean;
  preAuth: boolean;
}

function serverEntries(): Entry[] {
  const out: Entry[] = [];
  for (const table of allRouteTables as readonly (readonly RouteSpec[])[]) {
    for (const r of table) {
      if (r.devOnly) continue;
      const methods = Array.isArray(r.method) ? r.method : [r.method];
      for (const method of methods) {
        if (method === 'HEAD') continue;
        out.push({ method, path: pattern(r.url), session: r.auth === 'required', preAuth: r.preAuth === true });
      }
    }
  }
  return out;
}

const clientRows = ROUTES as readonly ClientRoute[];
const key = (e: { method: string; path: string }) => `${e.method} ${pattern(e.path)}`;

describe('browser route list matches the server route tables', () => {
  const server = serverEntries();

  test('the client list has no duplicate method + path and no duplicate area.name', () => {
    const seen = new Map<string, number>();
    for (const r of clientRows) seen.set(key(r), (seen.get(key(r)) ?? 0) + 1);
    assert.deepEqual(
      [...seen].filter(([, n]) => n > 1),
      [],
    );
    const names = clientRows.map((r) => `${r.area}.${r.name}`);
    assert.equal(new Set(names).size, names.length);
  });

  test('the client list carries no dev-only route', () => {
    assert.deepEqual(
      clientRows.filter((r) => r.path.startsWith('/api/dev/') || r.path.startsWith('/dev/') || r.path.startsWith('/debug')),
      [],
    );
  });

  test('every non-dev server route has exactly one client row with the same method and path pattern', () => {
    const missing: string[] = [];
    const duplicated: string[] = [];
    for (const e of server) {
      const n = clientRows.filter((r) => key(r) === key(e)).length;
      if (n === 0) missing.push(key(e));
      if (n > 1) duplicated.push(key(e));
    }
    assert.deepEqual(missing, [], `server routes without a client row in packages/browser/src/browser/routes.ts: ${missing.join(', ')}`);
    assert.deepEqual(duplicated, []);
  });

  test('every client row has its server route (tables not registered yet are named)', () => {
    const serverKeys = new Set(server.map(key));
    const missing = clientRows.filter((r) => !serverKeys.has(key(r))).map((r) => `${key(r)} (spec ${r.spec}, client ${r.area}.${r.name})`);
    assert.deepEqual(missing, [], `client rows without a server route in allRouteTables:\n  ${missing.join('\n  ')}`);
  });

  test('session need and pre-authentication agree with the server rows', () => {
    const mismatches: string[] = [];
    for (const e of server) {
      const r = clientRows.find((c) => key(c) === key(e));
      if (!r) continue;
      if (r.session !== e.session) mismatches.push(`${key(e)}: server session ${e.session}, client ${r.session}`);
      if (r.preAuth !== e.preAuth) mismatches.push(`${key(e)}: server preAuth ${e.preAuth}, client ${r.preAuth}`);
    }
    assert.deepEqual(mismatches, []);
  });

  test('the pre-authentication rows are the routes of spec 5.5', () => {
    assert.deepEqual(
      clientRows.filter((r) => r.preAuth).map((r) => r.path),
      ['/api/auth/login', '/api/auth/register', '/api/auth/recovery', '/api/auth/social/{provider}', '/api/auth/validate-document'],
    );
  });

  test('matchRoute finds the row of a concrete path (request() uses it to spot pre-authentication paths)', () => {
    const key = (r: ClientRoute | undefined) => (r ? `${r.area}.${r.name}` : undefined);
    assert.equal(key(matchRoute('post', '/api/auth/login')), 'auth.login');
    assert.equal(key(matchRoute('POST', '/api/auth/social/google?x=1')), 'auth.social');
    assert.equal(key(matchRoute('GET', '/api/games/category/slots')), 'games.category');
    assert.equal(key(matchRoute('GET', '/api/core-sportbook/events/live')), 'sports.coreSportbook');
    assert.equal(key(matchRoute('DELETE', '/api/games/vote')), 'games.deleteVote');
    assert.equal(matchRoute('GET', '/api/auth/login'), undefined, 'method matters');
    assert.equal(matchRoute('POST', '/api/auth/social/'), undefined, 'an empty segment is no parameter');
    assert.equal(matchRoute('POST', '/api/auth/social/google/extra'), undefined);
    assert.equal(matchRoute('POST', '/api/dev/proxy/__sandbox/sessions/expire'), undefined);
    for (const r of clientRows) {
      const path = r.path.replace(/\{[^}]+\}/g, 'x').replace(/\*$/, 'a/b');
      assert.equal(matchRoute(r.method, path), r, `${r.method} ${path}`);
    }
  });
});
