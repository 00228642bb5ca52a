/**
 * What the proxy expects of the 2xx answers of its BFF endpoints, by EP code (spec 7.2): the shapes of
 * spec part 2 as the BFF sends them (with `access_token`, before the proxy takes it out) and whether the
 * proxy needs the body. One table for the doctor's probes (`src/doctor/probes.ts`) and the sampled live
 * checks of upstream answers (`docs/behaviour.md "Operations"`): an endpoint without a row is held to
 * "a JSON body" only.
 *
 * @example
 * UPSTREAM_ANSWER_EXPECTATIONS.EP0003; // { schema: ProfileAnswer, needsBody: true }
 *
 * @module
 */
import { type TSchema, Type } from '@sinclair/typebox';
import type { EndpointCode } from '../errors/index.js';
import { AuthUser, AuthUserInfo, LoginAnswer, ProfileAnswer, ValidateDocumentAnswer, WalletRecord, openRecord } from './answers.js';
import type { AnswerExpectation } from './conformance.js';

/**
 * spec 2.2 LoginResponse as the BFF answers it: the proxy's {@link LoginAnswer} session branch plus
 * `access_token` (a JWT, checked apart), or the no-session branch (`type`).
 */
export const UpstreamLoginResponse: TSchema = Type.Union(
  [
    Type.Object(
      { access_token: Type.String(), expires_in: Type.Number(), token_type: Type.String(), user: AuthUser, userInfo: AuthUserInfo },
      { additionalProperties: true, description: 'a session' },
    ),
    (LoginAnswer as unknown as { anyOf: TSchema[] }).anyOf[1] as TSchema,
  ],
  { description: 'spec 2.2 LoginResponse' },
);

/** spec 2.3 RefreshTokenResponse: `{ access_token }` (a JWT, checked apart). */
export const UpstreamRefreshResponse: TSchema = Type.Object(
  { access_token: Type.String({ description: 'JWT' }), expires_in: Type.Optional(Type.Number()) },
  { additionalProperties: true, description: 'spec 2.3 RefreshTokenResponse' },
);

/** spec 2.8 provider listing as the BFF answers it: the two collections the proxy filters and decorates. */
export const UpstreamProviders: TSchema = Type.Object(
  { deposit: Type.Array(openRecord('a provider record')), withdraw: Type.Array(openRecord('a provider record')) },
  { additionalProperties: true, description: 'spec 2.8 provider listing' },
);

/** The 2xx answers whose shape the proxy knows, by EP code (login, profile, refresh, document check, wallet, providers). */
export const UPSTREAM_ANSWER_EXPECTATIONS: Readonly<Partial<Record<EndpointCode, AnswerExpectation>>> = {
  EP0001: { schema: UpstreamLoginResponse, needsBody: true },
  EP0003: { schema: ProfileAnswer, needsBody: true },
  EP0004: { schema: UpstreamRefreshResponse, needsBody: true },
  EP0006: { schema: ValidateDocumentAnswer },
  EP0034: { schema: WalletRecord },
  EP0090: { schema: UpstreamProviders },
};
