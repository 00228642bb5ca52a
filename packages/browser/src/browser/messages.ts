/**
 * The SDK's user-facing messages, one table per locale: Brazilian Portuguese (`pt-BR`, the
 * default and the fallback), English (`en`) and Spanish (`es`). Each table holds
 *
 * - `errors`: for every EM code of spec 7.3 the message of its meaning (`message`), and on the
 *   pre-authentication routes (spec 5.5, 7.4.4) the one that speaks of the details entered
 *   (`preAuthMessage`, absent where `message` already reads right there);
 * - `forms`: for every form-level error code the pre-authentication routes answer (CONTRACT.md
 *   "Error envelope": `{ ok: false, error: "<form_error_code>", detail }`), its message;
 * - `fallback`: the message of a failure nothing else names.
 *
 * The English `errors` are the registry's own columns (`message`, `preAuthMessage` of
 * `ERROR_CODES`, shown in docs/error-codes.md), so English has one source; the other tables are
 * declared here, each typed `Record<ErrorCode, …>` and `Record<FormErrorCode, string>`, so a code
 * without a message does not compile (DESIGN.md habit 2).
 *
 * A client picks its locale with the `locale` option of `createProxyClient`; by default the
 * browser's languages (`navigator.languages`), the first one the SDK has, else `pt-BR`.
 *
 * @example
 * resolveLocale(['es-AR', 'en']); // 'es'
 * errorMessage('EM0003', { locale: 'pt-BR' }); // 'Sua sessão expirou. Faça login novamente.'
 * formErrorMessage('invalid_credentials', 'en'); // 'The login or password is incorrect.'
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
  ERROR_LIST.map((e) => [e.code, e.preAuthMessage === e.message ? { message: e.message } : { message: e.message, preAuthMessage: e.preAuthMessage }]),
) as Record<ErrorCode, ErrorMessages>;

const PT_BR: LocaleMessages = {
  errors: {
    EM0001: { message: 'Sua sessão foi encerrada. Faça login novamente.', preAuthMessage: 'Falta algo de que esta etapa precisa. Comece de novo.' },
    EM0002: {
      message: 'Sua sessão não é válida. Faça login novamente.',
      preAuthMessage: 'Os dados informados não são válidos. Confira e tente novamente.',
    },
    EM0003: { message: 'Sua sessão expirou. Faça login novamente.', preAuthMessage: 'O código ou link expirou. Comece de novo para receber um novo.' },
    EM0004: { message: 'Seu acesso foi revogado. Faça login novamente.', preAuthMessage: 'Esta conta não pode entrar. Fale com o suporte.' },
    EM0005: {
      message: 'Sua sessão não é mais válida. Faça login novamente.',
      preAuthMessage: 'Os dados informados não foram aceitos. Confira e tente novamente.',
    },
    EM0006: {
      message: 'Notamos um acesso de outro endereço IP. Faça login novamente.',
      preAuthMessage: 'Notamos uma solicitação de outro endereço IP. Tente novamente.',
    },
    EM0007: {
      message: 'Notamos um acesso de outro dispositivo. Faça login novamente.',
      preAuthMessage: 'Notamos uma solicitação de outro dispositivo. Tente novamente.',
    },
    EM0008: {
      message: 'Notamos um acesso de outra localização. Faça login novamente.',
      preAuthMessage: 'Notamos uma solicitação de outra localização. Tente novamente.',
    },
    EM0009: {
      message: 'É necessária uma verificação de segurança. Faça login novamente para continuar.',
      preAuthMessage: 'É necessária uma verificação de segurança antes de continuar.',
    },
    EM0010: {
      message: 'Sua sessão é de uma versão antiga do site. Faça login novamente.',
      preAuthMessage: 'Esta página é de uma versão antiga do site. Recarregue-a e tente novamente.',
    },
    EM0012: { message: 'Sua conta está bloqueada. Fale com o suporte.' },
    EM0013: {
      message: 'Ocorreu um erro de segurança ao validar sua sessão. Faça login novamente.',
      preAuthMessage: 'Ocorreu um erro de segurança ao verificar seus dados. Tente novamente.',
    },
    EM0014: {
      message: 'Sua sessão não passou na validação de segurança. Faça login novamente.',
      preAuthMessage: 'Seus dados não passaram na validação de segurança. Tente novamente.',
    },
    EM0011: { message: 'Você não tem permissão para acessar isto.' },
    EM0021: { message: 'Muitas tentativas em pouco tempo. Aguarde um momento e tente novamente.' },
    EM0022: { message: 'Houve um conflito ao processar sua solicitação. Tente novamente.' },
    EM0031: { message: 'Algo deu errado do nosso lado. Tente novamente mais tarde.' },
    EM0032: { message: 'O serviço está temporariamente indisponível. Tente novamente em instantes.' },
    EM0041: { message: 'Sua sessão de jogo atingiu o limite de tempo.' },
    EM0042: { message: 'Ocorreu uma falha de rede. Verifique sua conexão e tente novamente.' },
    EM0099: { message: 'Algo deu errado. Tente novamente.' },
  },
  forms: {
    invalid_data: 'Alguns dados estão faltando ou não são válidos. Confira e tente novamente.',
    invalid_credentials: 'Login ou senha incorretos.',
    access_denied: 'Esta ação não é permitida para esta conta.',
    not_found: 'Não encontramos uma conta com esses dados.',
    conflict: 'Esses dados já estão em uso.',
    account_locked: 'Esta conta está bloqueada. Fale com o suporte.',
    too_many_attempts: 'Muitas tentativas. Aguarde um momento e tente novamente.',
    request_failed: 'Não foi possível concluir a solicitação. Tente novamente.',
    upstream_error: 'Algo deu errado do nosso lado. Tente novamente mais tarde.',
    invalid_request: 'Alguns campos estão faltando ou em formato inválido. Confira e tente novamente.',
  },
  fallback: 'A solicitação falhou.',
};

const EN: LocaleMessages = {
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

const ES: LocaleMessages = {
  errors: {
    EM0001: { message: 'Tu sesión ha finalizado. Inicia sesión de nuevo.', preAuthMessage: 'Falta algo que este paso necesita. Empieza de nuevo.' },
    EM0002: {
      message: 'Tu sesión no es válida. Inicia sesión de nuevo.',
      preAuthMessage: 'Los datos que ingresaste no son válidos. Revísalos e inténtalo de nuevo.',
    },
    EM0003: {
      message: 'Tu sesión ha expirado. Inicia sesión de nuevo.',
      preAuthMessage: 'El código o enlace ha expirado. Empieza de nuevo para recibir uno nuevo.',
    },
    EM0004: { message: 'Tu acceso fue revocado. Inicia sesión de nuevo.', preAuthMessage: 'Esta cuenta no puede iniciar sesión. Contacta con soporte.' },
    EM0005: {
      message: 'Tu sesión ya no es válida. Inicia sesión de nuevo.',
      preAuthMessage: 'Los datos que ingresaste no fueron aceptados. Revísalos e inténtalo de nuevo.',
    },
    EM0006: {
      message: 'Detectamos un acceso desde otra dirección IP. Inicia sesión de nuevo.',
      preAuthMessage: 'Detectamos una solicitud desde otra dirección IP. Inténtalo de nuevo.',
    },
    EM0007: {
      message: 'Detectamos un acceso desde otro dispositivo. Inicia sesión de nuevo.',
      preAuthMessage: 'Detectamos una solicitud desde otro dispositivo. Inténtalo de nuevo.',
    },
    EM0008: {
      message: 'Detectamos un acceso desde otra ubicación. Inicia sesión de nuevo.',
      preAuthMessage: 'Detectamos una solicitud desde otra ubicación. Inténtalo de nuevo.',
    },
    EM0009: {
      message: 'Se necesita una verificación de seguridad. Inicia sesión de nuevo para continuar.',
      preAuthMessage: 'Se necesita una verificación de seguridad antes de continuar.',
    },
    EM0010: {
      message: 'Tu sesión proviene de una versión anterior del sitio. Inicia sesión de nuevo.',
      preAuthMessage: 'Esta página proviene de una versión anterior del sitio. Recárgala e inténtalo de nuevo.',
    },
    EM0012: { message: 'Tu cuenta está bloqueada. Contacta con soporte.' },
    EM0013: {
      message: 'Se produjo un error de seguridad al validar tu sesión. Inicia sesión de nuevo.',
      preAuthMessage: 'Se produjo un error de seguridad al verificar tus datos. Inténtalo de nuevo.',
    },
    EM0014: {
      message: 'Tu sesión no superó la validación de seguridad. Inicia sesión de nuevo.',
      preAuthMessage: 'Tus datos no superaron la validación de seguridad. Inténtalo de nuevo.',
    },
    EM0011: { message: 'No tienes permiso para acceder a esto.' },
    EM0021: { message: 'Demasiados intentos en poco tiempo. Espera un momento e inténtalo de nuevo.' },
    EM0022: { message: 'Hubo un conflicto al procesar tu solicitud. Inténtalo de nuevo.' },
    EM0031: { message: 'Algo salió mal de nuestro lado. Inténtalo de nuevo más tarde.' },
    EM0032: { message: 'El servicio no está disponible temporalmente. Inténtalo de nuevo en unos instantes.' },
    EM0041: { message: 'Tu sesión de juego alcanzó su límite de tiempo.' },
    EM0042: { message: 'Se produjo un fallo de red. Revisa tu conexión e inténtalo de nuevo.' },
    EM0099: { message: 'Algo salió mal. Inténtalo de nuevo.' },
  },
  forms: {
    invalid_data: 'Faltan algunos datos o no son válidos. Revísalos e inténtalo de nuevo.',
    invalid_credentials: 'El usuario o la contraseña son incorrectos.',
    access_denied: 'Esta acción no está permitida para esta cuenta.',
    not_found: 'No encontramos una cuenta con esos datos.',
    conflict: 'Estos datos ya están en uso.',
    account_locked: 'Esta cuenta está bloqueada. Contacta con soporte.',
    too_many_attempts: 'Demasiados intentos. Espera un momento e inténtalo de nuevo.',
    request_failed: 'No se pudo completar la solicitud. Inténtalo de nuevo.',
    upstream_error: 'Algo salió mal de nuestro lado. Inténtalo de nuevo más tarde.',
    invalid_request: 'Faltan algunos campos o tienen un formato incorrecto. Revísalos e inténtalo de nuevo.',
  },
  fallback: 'La solicitud falló.',
};

/** The tables, by locale. */
export const MESSAGES: Readonly<Record<Locale, LocaleMessages>> = Object.freeze({ 'pt-BR': PT_BR, en: EN, es: ES });

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
export function resolveLocale(preferred: string | readonly string[] | null | undefined = browserLanguages()): Locale {
  const tags = typeof preferred === 'string' ? [preferred] : (preferred ?? []);
  for (const tag of tags) {
    if (typeof tag !== 'string') continue;
    const language = tag.trim().toLowerCase().split(/[-_]/)[0] ?? '';
    const locale = BY_LANGUAGE[language];
    if (locale !== undefined) return locale;
  }
  return DEFAULT_LOCALE;
}

/**
 * The user-facing message of an EM code (spec 7.3) in a locale: on a pre-authentication route
 * (`preAuth: true`) the row's pre-authentication message when it has one, else its message; the
 * locale's fallback for an unknown code. Never throws.
 * @param options.locale - default the browser's languages, then `pt-BR`
 */
export function errorMessage(code: string, options: { readonly locale?: Locale; readonly preAuth?: boolean } = {}): string {
  const table = MESSAGES[options.locale ?? resolveLocale()];
  const entry = (table.errors as Readonly<Record<string, ErrorMessages>>)[code];
  if (entry === undefined) return table.fallback;
  return (options.preAuth ? entry.preAuthMessage : undefined) ?? entry.message;
}

/**
 * The message of a form-level error code (spec 7.4.4) in a locale, or `undefined` for a code the
 * SDK does not know (show the EM message then). Never throws.
 * @param locale - default the browser's languages, then `pt-BR`
 */
export function formErrorMessage(code: string, locale: Locale = resolveLocale()): string | undefined {
  return isFormErrorCode(code) ? MESSAGES[locale].forms[code] : undefined;
}
