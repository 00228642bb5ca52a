/**
 * The SDK's messages in pt-BR, en and es (issue 34): every EM code of spec 7.3 and every form-level
 * error code has a message in every locale (and a pre-authentication one where the registry has
 * one), the English table is the registry's, the others are translations; the locale comes from the
 * `locale` option, else the browser's languages, else pt-BR; `ProxyError` speaks the client's
 * locale, also over real sockets against the proxy and its sandbox (a wrong password in
 * Portuguese). Every form-level code the proxy can answer on a pre-authentication route is one the
 * SDK has a message for.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import {
  ALL_MESSAGES,
  createProxyClient,
  DEFAULT_LOCALE,
  errorMessage,
  FORM_ERROR_CODES,
  formErrorMessage,
  LOCALES,
  memoryStorage,
  MESSAGES,
  ProxyError,
  resolveLocale,
} from '../packages/browser/src/browser/index.js';
import { createServer } from '../src/app.js';
import { upstreamFailureAnswer } from '../src/envelope.js';
import { ERROR_LIST, getError } from '../src/errors/index.js';

describe('one table per locale', () => {
  test('the locales are pt-BR (the default), en and es', () => {
    assert.deepEqual([...LOCALES], ['pt-BR', 'en', 'es']);
    assert.equal(DEFAULT_LOCALE, 'pt-BR');
    assert.deepEqual(Object.keys(MESSAGES).sort(), [...LOCALES].sort());
  });

  for (const locale of LOCALES) {
    test(`${locale}: every EM code has a message, and a pre-authentication one where the registry has one`, () => {
      const table = MESSAGES[locale];
      assert.deepEqual(Object.keys(table.errors).sort(), ERROR_LIST.map((e) => e.code).sort());
      for (const entry of ERROR_LIST) {
        const row = table.errors[entry.code];
        assert.ok(row.message.trim().length > 10, `${locale} ${entry.code}`);
        const registryHasOwn = entry.preAuthMessage !== entry.message;
        assert.equal(row.preAuthMessage !== undefined, registryHasOwn, `${locale} ${entry.code}: pre-authentication message`);
        if (row.preAuthMessage !== undefined) assert.notEqual(row.preAuthMessage, row.message, `${locale} ${entry.code}`);
      }
    });

    test(`${locale}: every form-level error code has a message, and there is a fallback`, () => {
      const table = MESSAGES[locale];
      assert.deepEqual(Object.keys(table.forms).sort(), [...FORM_ERROR_CODES].sort());
      for (const code of FORM_ERROR_CODES) assert.ok(table.forms[code].trim().length > 10, `${locale} ${code}`);
      assert.ok(table.fallback.trim().length > 5);
    });
  }

  test('en is the registry: message and preAuthMessage of every EM row', () => {
    for (const entry of ERROR_LIST) {
      assert.equal(errorMessage(entry.code, { locale: 'en' }), entry.message, entry.code);
      assert.equal(errorMessage(entry.code, { locale: 'en', preAuth: true }), entry.preAuthMessage, entry.code);
    }
  });

  test('pt-BR and es are translations: no message is the English one, and the two differ', () => {
    for (const locale of ['pt-BR', 'es'] as const) {
      const table = MESSAGES[locale];
      for (const entry of ERROR_LIST) {
        const row = table.errors[entry.code];
        assert.notEqual(row.message, entry.message, `${locale} ${entry.code}`);
        assert.notEqual(row.message, MESSAGES[locale === 'es' ? 'pt-BR' : 'es'].errors[entry.code].message, `${locale} ${entry.code}`);
      }
      for (const code of FORM_ERROR_CODES) assert.notEqual(table.forms[code], MESSAGES.en.forms[code], `${locale} ${code}`);
    }
  });

  test('errorMessage and formErrorMessage: locale, pre-authentication, unknown codes', () => {
    assert.equal(errorMessage('EM0003', { locale: 'pt-BR' }), 'Sua sessão expirou. Faça login novamente.');
    assert.equal(errorMessage('EM0003', { locale: 'es' }), 'Tu sesión ha expirado. Inicia sesión de nuevo.');
    assert.equal(errorMessage('EM0003', { locale: 'pt-BR', preAuth: true }), MESSAGES['pt-BR'].errors.EM0003.preAuthMessage);
    // A row without a pre-authentication message keeps its message there.
    assert.equal(errorMessage('EM0012', { locale: 'pt-BR', preAuth: true }), MESSAGES['pt-BR'].errors.EM0012.message);
    assert.equal(errorMessage('EM9999', { locale: 'pt-BR' }), 'A solicitação falhou.');
    assert.equal(formErrorMessage('invalid_credentials', 'pt-BR'), 'Login ou senha incorretos.');
    assert.equal(formErrorMessage('invalid_credentials', 'en'), 'The login or password is incorrect.');
    assert.equal(formErrorMessage('no_such_code', 'en'), undefined);
  });
});

describe('the locale: the option, else the browser languages, else pt-BR', () => {
  const cases: [string | readonly string[] | null, string][] = [
    ['pt-BR', 'pt-BR'],
    ['pt', 'pt-BR'],
    ['pt-PT', 'pt-BR'],
    ['PT_br', 'pt-BR'],
    ['en', 'en'],
    ['en-GB', 'en'],
    ['es-419', 'es'],
    ['es-MX', 'es'],
    ['fr-FR', 'pt-BR'],
    ['', 'pt-BR'],
    [[], 'pt-BR'],
    [null, 'pt-BR'],
    [['fr-FR', 'de', 'es-AR', 'en'], 'es'],
    [['de-DE', 'en-US'], 'en'],
    [['  en-US  '], 'en'],
  ];
  for (const [preferred, want] of cases) {
    test(`${JSON.stringify(preferred)} → ${want}`, () => {
      assert.equal(resolveLocale(preferred), want);
    });
  }

  test('default: navigator.languages, then navigator.language, then pt-BR', (t) => {
    const descriptor = Object.getOwnPropertyDescriptor(globalThis, 'navigator');
    t.after(() => {
      if (descriptor) Object.defineProperty(globalThis, 'navigator', descriptor);
      else delete (globalThis as { navigator?: unknown }).navigator;
    });
    const setNavigator = (value: unknown) => Object.defineProperty(globalThis, 'navigator', { value, configurable: true, writable: true });
    setNavigator({ languages: ['es-ES', 'pt-BR'], language: 'es-ES' });
    assert.equal(resolveLocale(), 'es');
    assert.equal(createProxyClient({ storage: memoryStorage() }).locale, 'es');
    assert.equal(createProxyClient({ storage: memoryStorage(), locale: 'en' }).locale, 'en', 'the option wins');
    setNavigator({ languages: [], language: 'en-US' });
    assert.equal(resolveLocale(), 'en');
    setNavigator({ languages: ['ja-JP'], language: 'ja-JP' });
    assert.equal(resolveLocale(), 'pt-BR');
    assert.equal(
      new ProxyError({ status: 503, method: 'GET', url: '/api/games/list', messages: ALL_MESSAGES }).message,
      MESSAGES['pt-BR'].errors.EM0032.message,
    );
    setNavigator(undefined);
    assert.equal(resolveLocale(), 'pt-BR');
  });
});

describe('ProxyError speaks its locale', () => {
  test('message in the locale; on a pre-authentication route, the form-level error and its message', () => {
    const expired = new ProxyError({
      status: 401,
      method: 'GET',
      url: '/api/wallet/refresh',
      data: { reason: 'token_expired' },
      messages: MESSAGES['pt-BR'],
    });
    assert.deepEqual(
      [expired.locale, expired.errorCode, expired.message],
      ['pt-BR', 'EM0003', 'Sua sessão expirou. Faça login novamente.'],
    );
    assert.equal(expired.formError, null);
    assert.equal(expired.formMessage, null);
    const wrong = new ProxyError({
      status: 401,
      method: 'POST',
      url: '/api/auth/login',
      data: { ok: false, error: 'invalid_credentials', detail: 'Invalid credentials' },
      preAuth: true,
      messages: ALL_MESSAGES,
      locale: 'es',
    });
    assert.equal(wrong.message, MESSAGES.es.errors.EM0005.preAuthMessage);
    assert.equal(wrong.formError, 'invalid_credentials');
    assert.equal(wrong.formMessage, 'El usuario o la contraseña son incorrectos.');
    // The same envelope off a pre-authentication route is no form error.
    const notForm = new ProxyError({
      status: 409,
      method: 'POST',
      url: '/api/wallet/action',
      data: { ok: false, error: 'conflict' },
      messages: MESSAGES.es,
    });
    assert.equal(notForm.formError, null);
  });

  test('every form-level code the proxy answers on a pre-authentication route (any status 400-599, no reason) has a message', () => {
    const seen = new Set<string>();
    for (let status = 400; status <= 599; status++) {
      const answer = upstreamFailureAnswer({ status, headers: {}, body: Buffer.alloc(0) }, { preAuth: true });
      const error = (answer.body as { error?: unknown }).error;
      assert.equal(typeof error, 'string', `status ${status}`);
      seen.add(error as string);
    }
    const missing = [...seen].filter((code) => !(FORM_ERROR_CODES as readonly string[]).includes(code));
    assert.deepEqual(missing, [], 'form-level codes of the proxy without a message in the SDK');
  });
});

describe('over real sockets: the proxy and its sandbox', () => {
  let app: FastifyInstance;
  let base: string;
  before(async () => {
    app = await createServer({ NODE_ENV: 'test', LOG_LEVEL: 'silent' });
    base = await app.listen({ port: 0, host: '127.0.0.1' });
  });
  after(async () => {
    await app.close();
  });

  test('a wrong password in pt-BR: the form message and the pre-authentication message in Portuguese; a missing session in es', async () => {
    const client = createProxyClient({ baseUrl: base, sendBeacon: null, storage: memoryStorage(), messages: MESSAGES['pt-BR'] });
    assert.equal(client.locale, 'pt-BR');
    const e = await client.auth.login({ body: { login: 'demo@example.com', password: 'not-the-password' } }).then(
      () => assert.fail('the login succeeded'),
      (error: unknown) => error,
    );
    assert.ok(e instanceof ProxyError);
    assert.deepEqual([e.status, e.ref, e.formError], [401, 'EP0700-EM0005', 'invalid_credentials']);
    assert.equal(e.formMessage, 'Login ou senha incorretos.');
    assert.equal(e.message, MESSAGES['pt-BR'].errors.EM0005.preAuthMessage);
    assert.notEqual(e.message, getError('EM0005').preAuthMessage);

    const es = createProxyClient({ baseUrl: base, sendBeacon: null, storage: memoryStorage(), locale: ['es-AR'] });
    const noSession = await es.auth.profile().then(
      () => assert.fail('the profile answered without a session'),
      (error: unknown) => error,
    );
    assert.ok(noSession instanceof ProxyError);
    assert.deepEqual([noSession.status, noSession.errorCode, noSession.locale], [401, 'EM0001', 'es']);
    assert.equal(noSession.message, 'Tu sesión ha finalizado. Inicia sesión de nuevo.');
  });
});
