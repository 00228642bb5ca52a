/**
 * The browser SDK's route types come from the route tables (scripts/gen-sdk-types.ts): the committed
 * `packages/browser/src/browser/openapi.gen.ts` is what the proxy's OpenAPI document gives now (a
 * schema changed without `npm run gen:sdk-types` fails here), it covers every path the client calls
 * that the document has, and the records the specification lists are closed. The compile-time checks
 * below fail `npm run typecheck` when a route's answer turns `unknown` or a closed record opens.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import type { AuthUser, AuthUserInfo, LoginResult, ResultOf } from '../packages/browser/src/browser/index.js';
import type { RouteArea, RoutesOf } from '../packages/browser/src/browser/routes.js';
import { ROUTES } from '../packages/browser/src/browser/routes.js';
import { CLOSED_RECORDS, renderSdkTypes } from '../scripts/gen-sdk-types.js';

/** The paths of the routes whose answer type is `unknown`, as a union. */
type UntypedPaths = {
  [A in RouteArea]: {
    [R in RoutesOf<A> as R['name']]: unknown extends ResultOf<R> ? `${R['method']} ${R['path']}` : never;
  }[RoutesOf<A>['name']];
}[RouteArea];
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
/** Only the raw passthrough, whose upstream answer has no schema, is untyped. */
const onlyThePassthrough: Same<UntypedPaths, 'GET /api/core-sportbook/*'> = true;
/** A closed record has no index signature: a string key is not one of its keys. */
const closed: [string extends keyof AuthUser ? 1 : 0, string extends keyof AuthUserInfo ? 1 : 0, string extends keyof LoginResult ? 1 : 0] =
  [0, 0, 0];

test('openapi.gen.ts is what the route tables give now', async () => {
  const committed = readFileSync(new URL('../packages/browser/src/browser/openapi.gen.ts', import.meta.url), 'utf8');
  assert.ok(
    committed === (await renderSdkTypes()),
    'packages/browser/src/browser/openapi.gen.ts is out of date: run npm run gen:sdk-types',
  );
  assert.deepEqual([onlyThePassthrough, closed], [true, [0, 0, 0]]);
});

test('every path the client calls is in it but the raw passthrough; the closed records are the ones of spec part 2', () => {
  const text = readFileSync(new URL('../packages/browser/src/browser/openapi.gen.ts', import.meta.url), 'utf8');
  const missing = [...new Set(ROUTES.map((r) => r.path))].filter((path) => !text.includes(`    "${path}": {`));
  assert.deepEqual(missing, ['/api/core-sportbook/*']);
  assert.deepEqual([...CLOSED_RECORDS].sort(), [
    'AuthUser',
    'AuthUserInfo',
    'LoginResponse',
    'ProfileResponse',
    'ValidateDocumentResponse',
  ]);
});
