/**
 * The SDK's user-facing messages, one table per locale: Brazilian Portuguese (`pt-BR`, the
 * default and the fallback), English (`en`) and Spanish (`es`). Each table holds
 *
 * - `errors`: for every EM code of spec 7.3 the message of its meaning (`message`), and on the
 *   pre-authentication routes (spec 5.5, 7.4.4) the one that speaks of the details entered
 *   (`preAuthMessage`, absent where `message` already reads right there);
 * - `forms`: for every form-level error code the pre-authentication routes answer (docs/behaviour.md
 *   "Error envelope": `{ ok: false, error: "<form_error_code>", detail }`), its message;
 * - `fallback`: the message of a failure nothing else names.
 *
 * The English `errors` are the registry's own columns (`message`, `preAuthMessage` of
 * `ERROR_CODES`, shown in docs/error-codes.md), so English has one source; the other tables are
 * declared here, each typed `Record<ErrorCode, …>` and `Record<FormErrorCode, string>`, so a code
 * without a message does not compile (docs/architecture.md "Habits" (habit 2)).
 *
 * This module holds the types, the locale rule and the English table; the pt-BR and es tables are
 * modules of their own (`messages/pt-BR.ts`, `messages/es.ts`) and `all-messages.ts` gathers the
 * three, so that a page importing one table bundles that one only. A client picks its locale
 * among the tables it has with its `locale` option; by default the browser's languages
 * (`navigator.languages`), the first one it has, else `pt-BR`.
 *
 * @example
 * resolveLocale(['es-AR', 'en']); // 'es'
 * messageIn(EN_MESSAGES, 'EM0003'); // 'Your session has expired. Please log in again.'
 * formMessageIn(EN_MESSAGES, 'invalid_credentials'); // 'The login or password is incorrect.'
 *
 * @module
 */
import { ERROR_LIST, type ErrorCode } from '../errors/index.js';

/** The locales the SDK speaks, the default first. */
export const LOCALES = ['pt-BR', 'en', 'es'] as const;

/** A locale of the SDK's messages. */
export type Locale = (typeof LOCALES)[number];

/** The locale used when neither the `locale` option nor the browser's languages name one the SDK has. */
export const DEFAULT_LOCALE: Locale = 'pt-BR';

/**
 * The form-level error codes of the pre-authentication routes (spec 7.4.4): the proxy's names by
 * upstream status (400/422 `invalid_data`, 401 `invalid_credentials`, 403 `access_denied`, 404
 * `not_found`, 409 `conflict`, 423 `account_locked`, 429 `too_many_attempts`; any other 4xx
 * `request_failed`, 5xx `upstream_error`), plus `invalid_request`, the proxy's own refusal of a
 * body that fails validation (400).
 */
export const FORM_ERROR_CODES = [
  'invalid_data',
  'invalid_credentials',
  'access_denied',
  'not_found',
  'conflict',
  'account_locked',
  'too_many_attempts',
  'request_failed',
  'upstream_error',
  'invalid_request',
] as const;

/** A form-level error code (see {@link FORM_ERROR_CODES}). */
export type FormErrorCode = (typeof FORM_ERROR_CODES)[number];

/** The messages of one EM code in one locale. */
export interface ErrorMessages {
  /** What the user reads for a failure of this family. */
  readonly message: string;
  /** What a pre-authentication route shows instead; `message` when absent. */
  readonly preAuthMessage?: string;
}

/** One locale's table. */
export interface LocaleMessages {
  /** The locale the table speaks. */
  readonly locale: Locale;
  readonly errors: Readonly<Record<ErrorCode, ErrorMessages>>;
  readonly forms: Readonly<Record<FormErrorCode, string>>;
  /** A failure that no code names. */
  readonly fallback: string;
}

const FORM_CODES: ReadonlySet<string> = new Set(FORM_ERROR_CODES);

/** Whether a value is a form-level error code the SDK has messages for. */
export function isFormErrorCode(value: unknown): value is FormErrorCode {
  return typeof value === 'string' && FORM_CODES.has(value);
}

const EN_ERRORS = Object.fromEntries(
  ERROR_LIST.map((e) => [
    e.code,
    e.preAuthMessage === e.message ? { message: e.message } : { message: e.message, preAuthMessage: e.preAuthMessage },
  ]),
) as Record<ErrorCode, ErrorMessages>;

/**
 * The English table (`en`): the registry's own `message` and `preAuthMessage` columns, so it costs
 * little more than the registry the classifier needs anyway. The table of a client given no other.
 */
export const EN_MESSAGES: LocaleMessages = {
  locale: 'en',
  errors: EN_ERRORS,
  forms: {
    invalid_data: 'Some of the details are missing or not valid. Please check them and try again.',
    invalid_credentials: 'The login or password is incorrect.',
    access_denied: 'This action is not allowed for this account.',
    not_found: 'We could not find an account with these details.',
    conflict: 'These details are already in use.',
    account_locked: 'This account is locked. Please contact support.',
    too_many_attempts: 'Too many attempts. Please wait a moment and try again.',
    request_failed: 'The request could not be completed. Please try again.',
    upstream_error: 'Something went wrong on our side. Please try again later.',
    invalid_request: 'Some fields are missing or in the wrong format. Please check them and try again.',
  },
  fallback: 'The request failed.',
};

/** Each language the SDK has, by its primary subtag (`pt-PT` reads as `pt-BR`, `es-MX` as `es`). */
const BY_LANGUAGE: Readonly<Record<string, Locale>> = { pt: 'pt-BR', en: 'en', es: 'es' };

/**
 * The browser's preferred languages, most preferred first: `navigator.languages`, else
 * `[navigator.language]`, else `[]` (no `navigator`, e.g. Node.js 20).
 */
export function browserLanguages(): readonly string[] {
  const nav = (globalThis as { navigator?: { languages?: readonly string[]; language?: string } }).navigator;
  if (nav?.languages && nav.languages.length > 0) return nav.languages;
  return typeof nav?.language === 'string' && nav.language !== '' ? [nav.language] : [];
}

/**
 * The SDK locale for a list of language tags (BCP 47, most preferred first): the first tag whose
 * language the SDK has (`pt-BR`, `pt`, `pt-PT` → `pt-BR`; `en-GB` → `en`; `es-419` → `es`;
 * case-insensitive), else {@link DEFAULT_LOCALE} (`pt-BR`). Never throws.
 * @param preferred - one tag or a list; default the browser's languages ({@link browserLanguages})
 */
export function resolveLocale(
  preferred: string | readonly string[] | null | undefined = browserLanguages(),
  available: readonly Locale[] = LOCALES,
): Locale {
  const tags = typeof preferred === 'string' ? [preferred] : (preferred ?? []);
  for (const tag of tags) {
    if (typeof tag !== 'string') continue;
    const language = tag.trim().toLowerCase().split(/[-_]/)[0] ?? '';
    const locale = BY_LANGUAGE[language];
    if (locale !== undefined && available.includes(locale)) return locale;
  }
  return available.includes(DEFAULT_LOCALE) ? DEFAULT_LOCALE : (available[0] ?? DEFAULT_LOCALE);
}

/**
 * The table a client speaks, among the tables it was given: the first whose locale
 * {@link resolveLocale} picks for `preferred` (default the browser's languages); `pt-BR` when given
 * and nothing else matches, else the first table; {@link EN_MESSAGES} when none was given.
 */
export function pickMessages(
  tables: LocaleMessages | readonly LocaleMessages[] | undefined,
  preferred?: string | readonly string[] | null,
): LocaleMessages {
  const list = tables === undefined ? [] : 'errors' in tables ? [tables as LocaleMessages] : (tables as readonly LocaleMessages[]);
  if (list.length === 0) return EN_MESSAGES;
  const locale = resolveLocale(
    preferred === undefined ? browserLanguages() : preferred,
    list.map((t) => t.locale),
  );
  return list.find((t) => t.locale === locale) ?? (list[0] as LocaleMessages);
}

/**
 * The message of an EM code (spec 7.3) in a table: on a pre-authentication route (`preAuth`) the
 * row's pre-authentication message when it has one, else its message; the table's fallback for an
 * unknown code.
 */
export function messageIn(table: LocaleMessages, code: string, preAuth = false): string {
  const entry = (table.errors as Readonly<Record<string, ErrorMessages>>)[code];
  if (entry === undefined) return table.fallback;
  return (preAuth ? entry.preAuthMessage : undefined) ?? entry.message;
}

/** The message of a form-level error code in a table, or `undefined` for a code the SDK does not know. */
export function formMessageIn(table: LocaleMessages, code: string): string | undefined {
  return isFormErrorCode(code) ? table.forms[code] : undefined;
}
