/**
 * The Spanish messages (`es`), importable on their own (`@front-proxy/browser/messages/es`).
 *
 * @module
 */
import type { LocaleMessages } from '../messages.js';

/** The Spanish table (`es`). */
export const es: LocaleMessages = {
  locale: 'es',
  errors: {
    EM0001: {
      message: 'Tu sesión ha finalizado. Inicia sesión de nuevo.',
      preAuthMessage: 'Falta algo que este paso necesita. Empieza de nuevo.',
    },
    EM0002: {
      message: 'Tu sesión no es válida. Inicia sesión de nuevo.',
      preAuthMessage: 'Los datos que ingresaste no son válidos. Revísalos e inténtalo de nuevo.',
    },
    EM0003: {
      message: 'Tu sesión ha expirado. Inicia sesión de nuevo.',
      preAuthMessage: 'El código o enlace ha expirado. Empieza de nuevo para recibir uno nuevo.',
    },
    EM0004: {
      message: 'Tu acceso fue revocado. Inicia sesión de nuevo.',
      preAuthMessage: 'Esta cuenta no puede iniciar sesión. Contacta con soporte.',
    },
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
