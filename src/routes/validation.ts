/**
 * spec 4.2 Validation: contact and identity validation routes, rows in the specification's order.
 * Every row is a pure forward of its validated body; the upstream paths keep the BFF's spelling
 * (`validade-email-code`, `validade-sms-code`). All need a session except the postal-code lookup
 * (docs/behaviour.md "Which routes need a session").
 *
 * @module
 */
import {
  EmailChangeBody,
  EmailVerifyBody,
  flatBody,
  LinkConfirmBody,
  optionalBody,
  POSTAL_CODE_BODY_LIMIT,
  PostalCodeBody,
  SmsChangeBody,
  SmsVerifyBody,
} from '../contracts/account.js';
import { bff, forward, route, type RouteSpec, routeTable } from './route.js';

/** A flat body, or no body at all (sent upstream as `{}`). */
const AnyFlat = optionalBody(flatBody());

/** spec 4.2 Validation, in the specification's order. */
export const validationRoutes: readonly RouteSpec[] = routeTable('Validation', [
  route({
    method: 'POST',
    url: '/api/validation/email/send',
    spec: '4.2',
    summary: 'send e-mail verification code',
    auth: 'required',
    body: AnyFlat,
    upstream: [bff('POST', '/bff/users/send-email')],
    handler: forward(),
  }),
  route({
    method: 'POST',
    url: '/api/validation/email/verify',
    spec: '4.2',
    summary: 'verify e-mail code (`code`)',
    auth: 'required',
    body: EmailVerifyBody,
    upstream: [bff('POST', '/bff/users/validade-email-code')],
    handler: forward(),
  }),
  route({
    method: 'PATCH',
    url: '/api/validation/email/change',
    spec: '4.2',
    summary: 'change user e-mail (`email`)',
    auth: 'required',
    body: EmailChangeBody,
    upstream: [bff('PATCH', '/bff/users/self-email')],
    handler: forward(),
  }),
  route({
    method: 'POST',
    url: '/api/validation/sms/send',
    spec: '4.2',
    summary: 'send SMS code',
    auth: 'required',
    body: AnyFlat,
    upstream: [bff('POST', '/bff/users/send-sms')],
    handler: forward(),
  }),
  route({
    method: 'POST',
    url: '/api/validation/sms/verify',
    spec: '4.2',
    summary: 'verify SMS code (`code`)',
    auth: 'required',
    body: SmsVerifyBody,
    upstream: [bff('POST', '/bff/users/validade-sms-code')],
    handler: forward(),
  }),
  route({
    method: 'PATCH',
    url: '/api/validation/sms/change',
    spec: '4.2',
    summary: 'change phone (`phone`, optional `ddi`)',
    auth: 'required',
    body: SmsChangeBody,
    upstream: [bff('PATCH', '/bff/users/self-phone')],
    handler: forward(),
  }),
  route({
    method: 'PATCH',
    url: '/api/validation/docs/submit',
    spec: '4.2',
    summary: 'initial data (KYC level 1)',
    auth: 'required',
    body: flatBody(),
    upstream: [bff('PATCH', '/bff/users/add-initial-data')],
    handler: forward(),
  }),
  route({
    method: 'PATCH',
    url: '/api/validation/address/submit',
    spec: '4.2',
    summary: 'submit address',
    auth: 'required',
    body: flatBody(),
    upstream: [bff('PATCH', '/bff/users/add-address')],
    handler: forward(),
  }),
  route({
    method: 'PATCH',
    url: '/api/validation/terms/accept',
    spec: '4.2',
    summary: 'accept terms/contracts',
    auth: 'required',
    body: flatBody(),
    upstream: [bff('PATCH', '/bff/users/self-contracts')],
    handler: forward(),
  }),
  route({
    method: 'POST',
    url: '/api/validation/link-confirm',
    spec: '4.2',
    summary: 'confirm e-mail validation link (`token`)',
    auth: 'required',
    body: LinkConfirmBody,
    upstream: [bff('POST', '/bff/validate-confirmation')],
    handler: forward(),
  }),
  route({
    method: 'POST',
    url: '/api/address/lookup-by-postal-code',
    spec: '4.2',
    summary: 'postal-code lookup (`cep`, plus any other scalar field, forwarded unchanged); no session needed',
    auth: 'none',
    body: PostalCodeBody,
    bodyLimit: POSTAL_CODE_BODY_LIMIT,
    upstream: [bff('POST', '/apicep')],
    evictsProfile: false,
    handler: forward(),
  }),
]);
