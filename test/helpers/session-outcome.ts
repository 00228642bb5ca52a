/**
 * What a proxy made of a session token, read on an authenticated passthrough route: `'200'` when the
 * call reached the BFF with the token as its Bearer (and nothing else was sent), else the status and
 * the 401's reason (`'401 invalid_token'`), with nothing sent upstream. Shared by the key tests
 * (algorithms per key type, JWKS in rotation).
 */
import assert from 'node:assert/strict';
import { type RecordingUpstream, send } from './recording-upstream.js';

/** The authenticated route the key tests send tokens to, and the BFF path it calls. */
export const SESSION_ROUTE = '/api/user/last-casino-games';
export const SESSION_UPSTREAM = '/bff/games/user-last-casino-games-dl';

/** Sends `token` to {@link SESSION_ROUTE} of the proxy at `proxyUrl`; `upstream` is the proxy's BFF. */
export async function sessionOutcome(proxyUrl: string, upstream: RecordingUpstream, token: string): Promise<string> {
  const sent = upstream.requests.length;
  const res = await send(proxyUrl, 'GET', SESSION_ROUTE, { token });
  const reached = upstream.requests.slice(sent);
  if (res.status === 200) {
    assert.deepEqual(
      reached.map((r) => [r.path, r.headers.authorization]),
      [[SESSION_UPSTREAM, `Bearer ${token}`]],
    );
    return '200';
  }
  assert.equal(reached.length, 0, `nothing reaches the BFF for a ${res.status}`);
  return `${res.status} ${(res.json as { reason?: string }).reason}`;
}
