/**
 * spec 4.3 User: profile, password, second factor, KYC document upload, preferences, limits,
 * login history, referrals. Rows in the specification's order; every row needs a session.
 *
 * The user id in an upstream path (`/users/update/{id}`, `/users/change-password/{id}`,
 * `/indication-stats/{userId}`) is always the session's own user, read from the cached profile
 * (spec 4.1 profile cache); an id in the body is dropped, never used.
 *
 * @module
 */
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import type { MultipartFile } from '@fastify/multipart';
import {
  ChangePasswordBody,
  CheckPasswordBody,
  DOCUMENT_ENDPOINTS,
  DOCUMENT_MEDIA_TYPES,
  type DocumentEndpoint,
  flatBody,
  LoginHistoryQuery,
  MAX_DOCUMENT_BYTES,
  optionalBody,
  pageNumber,
  StoreDocumentQuery,
  TwoFactorBody,
  UpdateLimitsBody,
  UpdatePreferencesBody,
  USER_ID_FIELDS,
} from '../contracts/account.js';
import { type ProxyAnswer, upstreamAnswer } from '../envelope.js';
import { sessionUserId } from '../session/identity.js';
import type { BodySource } from '../upstream/client.js';
import { UpstreamError } from '../upstream/errors.js';
import { buildPath } from '../upstream/paths.js';
import { bff, external, fail, forward, route, type RouteContext, type RouteSpec, routeTable } from './route.js';

/** The body without the user-id fields ({@link USER_ID_FIELDS}): the user is the session's own. */
export function withoutUserIds(body: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = { ...((body ?? {}) as Record<string, unknown>) };
  for (const field of USER_ID_FIELDS) delete out[field];
  return out;
}

/** A row whose upstream path carries the session user's id as `{id}` (or `{userId}`). */
function forwardForSessionUser(): (ctx: RouteContext) => Promise<ProxyAnswer> {
  return async (ctx) => {
    const user = await sessionUserId(ctx);
    if ('answer' in user) return user.answer;
    const target = ctx.request.routeOptions.config.upstream?.[0];
    if (!target) throw new Error(`route ${ctx.request.routeOptions.url} has no upstream`);
    const path = buildPath(target.path, { id: user.id, userId: user.id });
    const json = target.method === 'GET' ? undefined : withoutUserIds(ctx.body);
    return upstreamAnswer(await ctx.call(target.service, { method: target.method, path, json }));
  };
}

const UPLOAD_FIELD = 'file';

/** `a b/../c.png` → `a_b_.._c.png`, at most 100 characters; `document` when nothing is left. */
function safeFilename(name: string | undefined): string {
  const cleaned = (name ?? '')
    .replace(/[^A-Za-z0-9._-]/g, '_')
    .replace(/^\.+/, '')
    .slice(0, 100);
  return cleaned || 'document';
}

class UploadTooLarge extends Error {}

/**
 * The upload as a multipart body for the BFF, streamed as it arrives (never held whole): one part
 * named `file` with the client's (cleaned) filename and media type. When the client's file passes
 * {@link MAX_DOCUMENT_BYTES} the stream fails with {@link UploadTooLarge}, which aborts the upstream call.
 * `source` is kept up to date with the wait for the client's bytes (see {@link BodySource}): set when the
 * stream asks the client's file for its next chunk, cleared when it arrives.
 */
function multipartStream(file: MultipartFile, boundary: string, source: BodySource): Readable {
  const head =
    `--${boundary}\r\n` +
    `Content-Disposition: form-data; name="${UPLOAD_FIELD}"; filename="${safeFilename(file.filename)}"\r\n` +
    `Content-Type: ${file.mimetype}\r\n\r\n`;
  async function* parts() {
    yield Buffer.from(head);
    // The head was taken: the next bytes are the client's. Each `yield` returns once its chunk was taken
    // and the next one is asked for (the stream, of `highWaterMark` 1, asks only when its buffer is empty).
    source.waitingSince = performance.now();
    for await (const chunk of file.file) {
      source.waitingSince = 0;
      yield chunk as Buffer;
      source.waitingSince = performance.now();
    }
    source.waitingSince = 0;
    if (file.file.truncated) throw new UploadTooLarge('file too large');
    yield Buffer.from(`\r\n--${boundary}--\r\n`);
  }
  // One chunk at most waits in the stream: while the upstream does not take it, the client's file is not asked.
  return Readable.from(parts(), { objectMode: false, highWaterMark: 1 });
}

function fieldValue(file: MultipartFile, name: string): string | undefined {
  const field = file.fields[name];
  const one = Array.isArray(field) ? field[0] : field;
  return one && one.type === 'field' && typeof one.value === 'string' ? one.value : undefined;
}

/**
 * `POST /api/user/store-document`: a `multipart/form-data` upload of one file (at most
 * {@link MAX_DOCUMENT_BYTES}, a media type of {@link DOCUMENT_MEDIA_TYPES}). The document kind is the
 * query `endpoint` or a form field `endpoint` placed before the file; it must be one of
 * {@link DOCUMENT_ENDPOINTS} (else 400 before any upstream call). The file is streamed to
 * `POST /documents/{endpoint}` as a multipart body with one part named `file`.
 */
async function storeDocument(ctx: RouteContext<unknown, { endpoint?: DocumentEndpoint }>): Promise<ProxyAnswer> {
  let file: MultipartFile | undefined;
  try {
    file = await ctx.request.file({ limits: { fileSize: MAX_DOCUMENT_BYTES, files: 1, fields: 8, fieldSize: 1024, parts: 9 } });
  } catch (error) {
    ctx.request.log.info({ err: error }, 'multipart body refused');
    return fail(400, 'invalid_request', 'The body is not a valid multipart form');
  }
  if (!file) return fail(400, 'invalid_request', 'The form has no file');
  const endpoint = ctx.query.endpoint ?? fieldValue(file, 'endpoint');
  if (!endpoint || !(DOCUMENT_ENDPOINTS as readonly string[]).includes(endpoint)) {
    file.file.resume();
    return fail(400, 'invalid_request', `endpoint must be one of ${DOCUMENT_ENDPOINTS.join(', ')}`);
  }
  if (!(DOCUMENT_MEDIA_TYPES as readonly string[]).includes(file.mimetype)) {
    file.file.resume();
    return fail(415, 'unsupported_media_type', `The file must be one of ${DOCUMENT_MEDIA_TYPES.join(', ')}`);
  }
  const boundary = `----document${randomBytes(12).toString('hex')}`;
  const bodySource: BodySource = { waitingSince: 0 };
  const body = multipartStream(file, boundary, bodySource);
  let tooLarge = false;
  body.once('error', (error) => {
    tooLarge = error instanceof UploadTooLarge;
  });
  try {
    const res = await ctx.call('bff', {
      method: 'POST',
      path: buildPath('/documents/{endpoint}', { endpoint }),
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
      body,
      bodySource,
    });
    if (tooLarge) return fail(413, 'payload_too_large', `The file is larger than ${MAX_DOCUMENT_BYTES} bytes`);
    return upstreamAnswer(res);
  } catch (error) {
    if (tooLarge || file.file.truncated) {
      return fail(413, 'payload_too_large', `The file is larger than ${MAX_DOCUMENT_BYTES} bytes`);
    }
    if (error instanceof UpstreamError && error.code === 'client_aborted') {
      // The upload broke while it was streamed (a cut or unterminated form, a client gone): its upstream
      // call was aborted; a client fault, not an upstream failure.
      ctx.request.log.info({ code: error.code, cause: (error.cause as Error | undefined)?.message }, 'multipart body refused');
      return fail(400, 'invalid_request', 'The upload did not arrive whole');
    }
    throw error;
  } finally {
    // An upstream that answered before reading the whole upload: stop reading it (the rest is discarded).
    if (!body.readableEnded) body.destroy();
  }
}

/** spec 4.3 User, in the specification's order. */
export const userRoutes: readonly RouteSpec[] = routeTable('User', [
  route({
    method: 'PATCH',
    url: '/api/user/update-profile',
    spec: '4.3',
    summary: "update profile; the path id is the session's own user id, an id in the body is dropped",
    auth: 'required',
    body: flatBody(),
    upstream: [bff('POST', '/users/update/{id}'), bff('GET', '/auth/user-profile')],
    handler: forwardForSessionUser(),
  }),
  route({
    method: 'PATCH',
    url: '/api/user/update-address',
    spec: '4.3',
    summary: 'update address',
    auth: 'required',
    body: flatBody(),
    upstream: [bff('PATCH', '/bff/users/update-address')],
    handler: forward({ body: (ctx) => withoutUserIds(ctx.body) }),
  }),
  route({
    method: 'PATCH',
    url: '/api/user/add-phone',
    spec: '4.3',
    summary: 'add phone',
    auth: 'required',
    body: flatBody(),
    upstream: [bff('PATCH', '/bff/users/add-phone')],
    handler: forward({ body: (ctx) => withoutUserIds(ctx.body) }),
  }),
  route({
    method: 'POST',
    url: '/api/user/check-password',
    spec: '4.3',
    summary: 'verify current password (`password`)',
    auth: 'required',
    body: CheckPasswordBody,
    upstream: [bff('POST', '/bff/users/check-password')],
    evictsProfile: false,
    handler: forward({ body: (ctx) => withoutUserIds(ctx.body) }),
  }),
  route({
    method: 'POST',
    url: '/api/user/change-password',
    spec: '4.3',
    summary: "change password (`password` and the BFF's other fields); the path id is the session's own user id",
    auth: 'required',
    body: ChangePasswordBody,
    upstream: [bff('POST', '/users/change-password/{id}'), bff('GET', '/auth/user-profile')],
    handler: forwardForSessionUser(),
  }),
  route({
    method: 'PATCH',
    url: '/api/user/two-factor',
    spec: '4.3',
    summary: 'enable/disable second factor (`enabled`)',
    auth: 'required',
    body: TwoFactorBody,
    upstream: [bff('PATCH', '/bff/users/self-two-factor')],
    handler: forward({ body: (ctx) => withoutUserIds(ctx.body) }),
  }),
  route({
    method: 'POST',
    url: '/api/user/store-document',
    spec: '4.3',
    summary: `upload KYC document: multipart/form-data, one file (at most ${MAX_DOCUMENT_BYTES} bytes), endpoint ${DOCUMENT_ENDPOINTS.join(' | ')}`,
    auth: 'required',
    contentTypes: ['multipart/form-data'],
    querystring: StoreDocumentQuery,
    upstream: [bff('POST', '/documents/{endpoint}')],
    handler: storeDocument,
  }),
  route({
    method: 'PATCH',
    url: '/api/user/update-marketing',
    spec: '4.3',
    summary: 'marketing preferences',
    auth: 'required',
    body: flatBody(),
    upstream: [bff('PATCH', '/bff/users/self-mkt')],
    handler: forward({ body: (ctx) => withoutUserIds(ctx.body) }),
  }),
  route({
    method: 'PATCH',
    url: '/api/user/update-preferences',
    spec: '4.3',
    summary: 'generic preference metadata; only the whitelisted keys of PREFERENCE_KEYS, any other key is a 400',
    auth: 'required',
    body: UpdatePreferencesBody,
    upstream: [bff('PATCH', '/bff/users/update-user-info-metadata')],
    handler: forward(),
  }),
  route({
    method: 'PATCH',
    url: '/api/user/update-pending-data',
    spec: '4.3',
    summary: 'update pending data after login',
    auth: 'required',
    body: flatBody(),
    upstream: [bff('PATCH', '/bff/users/update-pending-data')],
    handler: forward({ body: (ctx) => withoutUserIds(ctx.body) }),
  }),
  route({
    method: 'PATCH',
    url: '/api/user/update-limits',
    spec: '4.3',
    summary: 'responsible-gaming limits (spa_* fields of spec 2.6; money limits in cents)',
    auth: 'required',
    body: UpdateLimitsBody,
    upstream: [bff('PATCH', '/bff/users/update-limits')],
    handler: forward(),
  }),
  route({
    method: 'PATCH',
    url: '/api/user/timeout-limits',
    spec: '4.3',
    summary: 'account pause/timeout',
    auth: 'required',
    body: flatBody(),
    upstream: [bff('PATCH', '/bff/users/timeout-limits')],
    handler: forward({ body: (ctx) => withoutUserIds(ctx.body) }),
  }),
  route({
    method: 'PATCH',
    url: '/api/user/self-exclusion',
    spec: '4.3',
    summary: 'self-exclusion',
    auth: 'required',
    body: flatBody(),
    upstream: [bff('PATCH', '/bff/users/self-exclusion')],
    handler: forward({ body: (ctx) => withoutUserIds(ctx.body) }),
  }),
  route({
    method: 'GET',
    url: '/api/user/login-history',
    spec: '4.3',
    summary: 'paginated login history, query `page` (default 1)',
    auth: 'required',
    querystring: LoginHistoryQuery,
    upstream: [bff('GET', '/bff/users/login-history')],
    handler: forward({ query: (ctx) => ({ page: pageNumber(ctx.query.page) }) }),
  }),
  route({
    method: 'GET',
    url: '/api/user/last-casino-games',
    spec: '4.3',
    summary: 'last games played',
    auth: 'required',
    upstream: [bff('GET', '/bff/games/user-last-casino-games-dl')],
    handler: forward(),
  }),
  route({
    method: 'GET',
    url: '/api/user/support-desk-token',
    spec: '4.3',
    summary: 'single-sign-on token for the support desk',
    auth: 'required',
    sideEffects: true,
    upstream: [bff('GET', '/bff/users/support-desk/create-or-update-user')],
    handler: forward(),
  }),
  route({
    method: 'POST',
    url: '/api/user/referrals',
    spec: '4.3',
    summary: "list the user's referrals",
    auth: 'required',
    body: optionalBody(flatBody()),
    upstream: [bff('POST', '/users/list-referrals')],
    evictsProfile: false,
    handler: forward({ body: (ctx) => withoutUserIds(ctx.body) }),
  }),
  route({
    method: 'GET',
    url: '/api/user/indication-stats',
    spec: '4.3',
    summary: "referral campaign v2 stats of the session's own user (external referral v2 service)",
    auth: 'required',
    upstream: [external('referralV2', 'GET', '/indication-stats/{userId}'), bff('GET', '/auth/user-profile')],
    handler: forwardForSessionUser(),
  }),
  route({
    method: 'GET',
    url: '/api/user/referral-indicator',
    spec: '4.3',
    summary: 'legacy referral v1 indicator (external referral v1 service)',
    auth: 'required',
    upstream: [external('referralV1', 'GET', '/refer-friend/indicator')],
    handler: forward(),
  }),
]);
