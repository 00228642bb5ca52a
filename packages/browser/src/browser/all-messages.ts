/**
 * Every message table (pt-BR, en, es) and the lookups by locale. The main entry
 * (`@front-proxy/browser`) uses them; a page that imports `@front-proxy/browser/core` and one table
 * (`@front-proxy/browser/messages/<locale>`) bundles that table only.
 *
 * @module
 */
import { EN_MESSAGES, type Locale, type LocaleMessages, formMessageIn, messageIn, resolveLocale } from './messages.js';
import { es } from './messages/es.js';
import { ptBR } from './messages/pt-BR.js';

/** The tables, by locale. */
export const MESSAGES: Readonly<Record<Locale, LocaleMessages>> = Object.freeze({ 'pt-BR': ptBR, en: EN_MESSAGES, es });

/** The tables as a list, the default locale first. */
export const ALL_MESSAGES: readonly LocaleMessages[] = [ptBR, EN_MESSAGES, es];

/**
 * The user-facing message of an EM code (spec 7.3) in a locale: on a pre-authentication route
 * (`preAuth: true`) the row's pre-authentication message when it has one, else its message; the
 * locale's fallback for an unknown code. Never throws.
 * @param options.locale - default the browser's languages, then `pt-BR`
 */
export function errorMessage(code: string, options: { readonly locale?: Locale; readonly preAuth?: boolean } = {}): string {
  return messageIn(MESSAGES[options.locale ?? resolveLocale()], code, options.preAuth === true);
}

/**
 * The message of a form-level error code (spec 7.4.4) in a locale, or `undefined` for a code the
 * SDK does not know (show the EM message then). Never throws.
 * @param locale - default the browser's languages, then `pt-BR`
 */
export function formErrorMessage(code: string, locale: Locale = resolveLocale()): string | undefined {
  return formMessageIn(MESSAGES[locale], code);
}
