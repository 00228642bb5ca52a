/**
 * `ProxyError`: a failed proxy call as the browser sees it, classified by the error-reference
 * module (spec 7): HTTP status, the reason of spec 7.3, the endpoint code of the proxy route
 * (EP07xx, spec 7.2), the error code (EM, spec 7.3) and the reference `EPdddd-EMdddd` (spec 7.1).
 *
 * @module
 */
import { classifyProxyError, type EndpointCode, type ErrorCode, type ErrorRef } from '../errors/index.js';
import {
  type FormErrorCode,
  formMessageIn,
  isFormErrorCode,
  type Locale,
  type LocaleMessages,
  messageIn,
  pickMessages,
} from './messages.js';

/** The reason given to a call that got no response (status 0, EM0042). */
export const NETWORK_FAILURE_REASON = 'network_error';

/** What {@link ProxyError} is built from. */
export interface ProxyErrorInit {
  /** HTTP status of the answer; `0` when there was none (network failure). */
  readonly status: number;
  /** The HTTP method of the call. */
  readonly method: string;
  /** The proxy URL that failed, as requested (path and query, or absolute). */
  readonly url: string;
  /** The parsed JSON body, when the answer was JSON. */
  readonly data?: unknown;
  /** The answer's text, when there was one. */
  readonly rawBody?: string | null;
  /** The transport error, for status 0. */
  readonly cause?: unknown;
  /**
   * The call went to a pre-authentication route (spec 5.5: login, register, recovery, social
   * login, document validation): `message` is the EM row's pre-authentication message.
   */
  readonly preAuth?: boolean;
  /**
   * The message tables to speak from (`MESSAGES['pt-BR']`, or the table of
   * `@front-proxy/browser/messages/<locale>`), one or several; default English only (the
   * registry's own columns). The client passes its own table.
   */
  readonly messages?: LocaleMessages | readonly LocaleMessages[];
  /**
   * With several `messages` tables, the language to pick (a BCP 47 tag or a list, see
   * `resolveLocale`); default the browser's languages, then `pt-BR` when given.
   */
  readonly locale?: string | readonly string[];
}

/** An HTML document's start: what an ingress or a CDN answers in place of the proxy (a 502 page, a login wall). */
const HTML_START = /^\s*(?:<!doctype\s+html|<html[\s>]|<head[\s>]|<body[\s>])/i;

/**
 * The reason as a person or a log line reads it: an HTML page that came as the raw body (no JSON to
 * read a reason from) is `an HTML page (N bytes)`, N its UTF-8 length, rather than the page itself;
 * any other reason is kept. The EM code is classified from the body as it came (spec 7.3).
 */
export function readableReason(reason: string | null, data: unknown, rawBody: string | null): string | null {
  if (data !== undefined || rawBody === null || reason === null || !HTML_START.test(rawBody)) return reason;
  return `an HTML page (${new TextEncoder().encode(rawBody).length} bytes)`;
}

function pathOf(url: string): string {
  const cut = url.search(/[?#]/);
  return cut === -1 ? url : url.slice(0, cut);
}

/**
 * A failed proxy call: an error answer (status 400-599: the envelope `{ ok: false, error,
 * detail }`, or the 401/403 body passed through unchanged, spec 7.4) or no answer at all
 * (status 0). `message` is the user-facing message of the EM code in the error's locale
 * (the table given, `messages.ts`: pt-BR, en, es; English when none): its pre-authentication message for a pre-authentication call (a
 * wrong password is not a session that ended), else its message. On a pre-authentication route
 * whose answer names a form-level error (`invalid_credentials`, …), `formError` and `formMessage`
 * say it more precisely: a form shows `formMessage ?? message`.
 *
 * @example
 * try { await client.auth.profile(); } catch (e) {
 *   if (e instanceof ProxyError) show(`${e.message} (#${e.ref})`); // "… (#EP0702-EM0003)"
 * }
 */
export class ProxyError extends Error {
  override readonly name = 'ProxyError';
  /** HTTP status; `0` for a network failure (no response). */
  readonly status: number;
  /** The reason extracted from the body (spec 7.3 priority), `'network_error'` for status 0, or `null`. */
  readonly reason: string | null;
  /** EP code of the proxy route (spec 7.2), e.g. `'EP0702'` for `GET /api/auth/profile`. */
  readonly endpointCode: EndpointCode;
  /** EM code of the failure (spec 7.3), e.g. `'EM0003'` for a 401 `token_expired`. */
  readonly errorCode: ErrorCode;
  /** `EPdddd-EMdddd` (spec 7.1), without the `#` display prefix. */
  readonly ref: ErrorRef;
  /** The HTTP method of the call. */
  readonly method: string;
  /** The URL that failed, as requested. */
  readonly url: string;
  /** The parsed body (JSON), or the raw text, or `undefined` (no answer or an empty one). */
  readonly body: unknown;
  /** Envelope `error` (spec 7.4) when the body is an envelope, else `null`. */
  readonly envelopeError: string | null;
  /** Envelope `detail` when the body is an envelope, else `null`. */
  readonly detail: string | null;
  /** The call went to a pre-authentication route: a form-level failure, never a session one (spec 7.4.4). */
  readonly preAuth: boolean;
  /** The locale of `message` and `formMessage`. */
  readonly locale: Locale;
  /** On a pre-authentication route, the envelope's form-level error code when the SDK knows it (spec 7.4.4), else `null`. */
  readonly formError: FormErrorCode | null;
  /** The message of `formError` in `locale`, or `null`. */
  readonly formMessage: string | null;

  constructor(init: ProxyErrorInit) {
    const classification = classifyProxyError({
      status: init.status,
      data: init.data,
      rawBody: init.rawBody ?? null,
      url: pathOf(init.url),
      method: init.method,
    });
    const preAuth = init.preAuth === true;
    const table = pickMessages(init.messages, init.locale);
    const locale = table.locale;
    super(messageIn(table, classification.errorCode, preAuth), { cause: init.cause });
    this.preAuth = preAuth;
    this.locale = locale;
    this.status = init.status;
    this.reason = init.status === 0 ? NETWORK_FAILURE_REASON : readableReason(classification.reason, init.data, init.rawBody ?? null);
    this.endpointCode = classification.endpointCode;
    this.errorCode = classification.errorCode;
    this.ref = classification.ref;
    this.method = init.method;
    this.url = init.url;
    this.body = init.data !== undefined ? init.data : init.rawBody || undefined;
    const d = init.data;
    const isEnvelope =
      typeof d === 'object' && d !== null && (d as { ok?: unknown }).ok === false && typeof (d as { error?: unknown }).error === 'string';
    this.envelopeError = isEnvelope ? (d as { error: string }).error : null;
    const detail = isEnvelope ? (d as { detail?: unknown }).detail : undefined;
    this.detail = typeof detail === 'string' ? detail : null;
    this.formError = preAuth && isFormErrorCode(this.envelopeError) ? this.envelopeError : null;
    this.formMessage = this.formError === null ? null : (formMessageIn(table, this.formError) ?? null);
  }

  /** A network failure (status 0, EM0042): never a reason to end the session (docs/architecture.md "Habits" (habit 9)). */
  get isNetworkFailure(): boolean {
    return this.status === 0;
  }
}

/** Whether a value is a {@link ProxyError} (also across bundle copies: checks the name and fields). */
export function isProxyError(value: unknown): value is ProxyError {
  if (value instanceof ProxyError) return true;
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Partial<ProxyError>;
  return v.name === 'ProxyError' && typeof v.status === 'number' && typeof v.ref === 'string';
}
