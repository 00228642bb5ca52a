/**
 * Opening sessions: a new session in the store and its signed JWT.
 *
 * @module
 */
import type { SandboxStore } from '../store.js';
import type { SandboxTokens } from '../tokens.js';
import type { SandboxSession, SandboxUser } from '../types.js';

/** RefreshTokenResponse of the sandbox (spec 2.3 plus `expires_in` and `token_type`). */
export interface IssuedToken {
  access_token: string;
  /** Seconds until the token expires. */
  expires_in: number;
  token_type: 'bearer';
}

/** Opens a session for `user` and signs its token. */
export async function issueToken(
  store: SandboxStore,
  tokens: SandboxTokens,
  user: SandboxUser,
): Promise<{ token: IssuedToken; session: SandboxSession }> {
  const session = store.createSession(user.id);
  const accessToken = await tokens.sign(session);
  return {
    session,
    token: {
      access_token: accessToken,
      expires_in: Math.round((session.expiresAt - session.issuedAt) / 1000),
      token_type: 'bearer',
    },
  };
}
