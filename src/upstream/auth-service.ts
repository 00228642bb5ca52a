/**
 * `authService`: the client service contract of spec 4.1 over the BFF, typed with the shapes of
 * spec part 2. Each function answers the raw {@link UpstreamResponse} (any status) so that routes can
 * apply the envelope; {@link readJson} reads a success body with its type.
 *
 * @module
 */
import type {
  ForgotPasswordPayload,
  LoginPayload,
  LoginResponse,
  ProfileResponse,
  RefreshTokenResponse,
  ValidateDocumentPayload,
  ValidateDocumentResponse,
} from '../contracts/auth.js';
import type { UpstreamRequest, UpstreamResponse } from './client.js';

/** An upstream answer whose 2xx body has the shape `T`. */
export type Typed<T> = UpstreamResponse & { readonly __shape?: T };

/** The JSON of a typed answer, or `undefined` when the body is not JSON. */
export function readJson<T>(res: Typed<T>): T | undefined {
  if (res.body.length === 0) return undefined;
  try {
    return JSON.parse(res.body.toString('utf8')) as T;
  } catch {
    return undefined;
  }
}

/** A function that performs one BFF call with the proxy's headers (see `RouteContext.call`). */
export type BffCaller = (req: UpstreamRequest) => Promise<UpstreamResponse>;

/**
 * The auth service of spec 4.1.
 *
 * - `login(payload)` — `POST /auth/login` → LoginResponse (spec 2.1, 2.2).
 * - `logout()` — `POST /auth/logout`, no body, no return.
 * - `getUserProfile(checkSpaAgain = true)` — `GET /auth/user-profile?check_spa_again=1` → `{ user, userInfo }`.
 * - `refreshToken()` — `POST /users/refresh-token` → `{ access_token }`.
 * - `registerSimplified(payload)` — `POST /bff/register-simplified` → LoginResponse.
 * - `forgotPassword(payload)` — `POST /auth/passwords/reset/options`.
 * - `validateDocument(payload)` — `POST /documents/validate` → ValidateDocumentResponse.
 *
 * Transport failures reject with `UpstreamError`; HTTP failures resolve with their status.
 */
export function authService(call: BffCaller) {
  return {
    login: (payload: LoginPayload): Promise<Typed<LoginResponse>> => call({ method: 'POST', path: '/auth/login', json: payload }),
    logout: (): Promise<Typed<void>> => call({ method: 'POST', path: '/auth/logout' }),
    logoutAuto: (): Promise<Typed<void>> => call({ method: 'POST', path: '/auth/logout-auto' }),
    getUserProfile: (checkSpaAgain = true): Promise<Typed<ProfileResponse>> =>
      call({
        method: 'GET',
        path: '/auth/user-profile',
        query: checkSpaAgain ? { check_spa_again: 1 } : undefined,
      }),
    refreshToken: (): Promise<Typed<RefreshTokenResponse>> => call({ method: 'POST', path: '/users/refresh-token' }),
    registerSimplified: (payload: Record<string, unknown>): Promise<Typed<LoginResponse>> =>
      call({ method: 'POST', path: '/bff/register-simplified', json: payload }),
    forgotPassword: (payload: ForgotPasswordPayload): Promise<Typed<unknown>> =>
      call({ method: 'POST', path: '/auth/passwords/reset/options', json: payload }),
    validateDocument: (payload: ValidateDocumentPayload): Promise<Typed<ValidateDocumentResponse>> =>
      call({ method: 'POST', path: '/documents/validate', json: payload }),
  };
}
export type AuthService = ReturnType<typeof authService>;
