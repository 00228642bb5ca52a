import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import {
  classifyError,
  ERROR_CODES,
  ERROR_LIST,
  type ErrorCode,
  type ErrorRow,
  errorCodeForReason,
  extractReason,
  getError,
  isErrorCode,
  isSessionEndingErrorCode,
  MAX_REASON_LENGTH,
} from '../../src/errors/index.js';
import {
  classifyProxyError,
  ENDPOINT_LIST,
  endpointCodeFor,
  PROXY_ENDPOINT_CODES,
  proxyEndpointCodeFor,
} from '../../packages/browser/src/errors/index.js';
import { ROUTES } from '../../packages/browser/src/browser/routes.js';

const em401 = (data: unknown, rawBody?: string) => classifyError({ status: 401, data, rawBody, url: '/auth/user-profile' }).errorCode;

// Each reason the specification lists in 7.3, written by hand: [code, reason].
const LISTED_401_REASONS: readonly (readonly [ErrorCode, string])[] = [
  ['EM0001', 'no_token'],
  ['EM0001', 'missing_token'],
  ['EM0001', 'token_required'],
  ['EM0001', 'User not logged in'],
  ['EM0002', 'wrong_token'],
  ['EM0002', 'wrong_ha'],
  ['EM0002', 'wrong_hf1'],
  ['EM0002', 'wrrong_hf2'],
  ['EM0002', 'invalid_token'],
  ['EM0002', 'malformed'],
  ['EM0002', 'bad_signature'],
  ['EM0002', 'Invalido'],
  ['EM0003', 'expired'],
  ['EM0003', 'token_expired'],
  ['EM0003', 'exp'],
  ['EM0003', 'expirado'],
  ['EM0004', 'revoked'],
  ['EM0004', 'blacklist'],
  ['EM0004', 'blocked'],
  ['EM0004', 'banned'],
  ['EM0006', 'ip_changed'],
  ['EM0006', 'ip_mismatch'],
  ['EM0007', 'device_changed'],
  ['EM0007', 'device_mismatch'],
  ['EM0008', 'location_changed'],
  ['EM0008', 'geo_mismatch'],
  ['EM0009', 'liveness_required'],
  ['EM0009', 'kyc_required'],
  ['EM0010', 'deprecated_version'],
  ['EM0010', 'legacy_version'],
  ['EM0010', 'obsolete_version'],
  ['EM0012', 'user_blocked'],
  ['EM0012', 'user_inactive'],
  ['EM0012', 'Usuário bloqueado'],
  ['EM0012', 'Conta bloqueada'],
  ['EM0012', 'Usuario bloqueado'],
  ['EM0012', 'User not authorized'],
  ['EM0012', 'Not authorised'],
  ['EM0012', 'Unauthorized user'],
  ['EM0012', 'Usuário não autorizado'],
  ['EM0012', 'Usuario nao autorizado'],
  ['EM0012', 'Usuario no autorizado'],
  ['EM0012', 'Conta não autorizada'],
  ['EM0012', 'Conta nao autorizada'],
  ['EM0012', 'Cuenta no autorizada'],
  ['EM0013', 'security_error'],
  ['EM0013', 'failed_auth_check'],
  ['EM0014', 'Wrong auth validation 1'],
  ['EM0014', 'Wrong auth validation 2'],
  ['EM0014', 'Wrong auth validation 3'],
  ['EM0014', 'Wrong auth validation (2)'],
  ['EM0014', 'Wrong auth refresh!'],
];

describe('spec 7.3: EM registry as data', () => {
  test('spec 7.3 has 21 rows: 13 401 families and 8 other statuses, in the specification order', () => {
    assert.deepEqual(
      ERROR_LIST.map((e) => e.code),
      [
        ...['EM0001', 'EM0002', 'EM0003', 'EM0004', 'EM0005', 'EM0006', 'EM0007', 'EM0008', 'EM0009', 'EM0010'],
        ...['EM0012', 'EM0013', 'EM0014', 'EM0011', 'EM0021', 'EM0022', 'EM0031', 'EM0032', 'EM0041', 'EM0042', 'EM0099'],
      ],
    );
    assert.equal(ERROR_LIST.filter((e) => e.group === 'session').length, 13);
    assert.equal(ERROR_LIST.filter((e) => e.group === 'status').length, 8);
  });

  test('the source writes each code once (a duplicate key would silently replace a row)', () => {
    const source = readFileSync(new URL('../../packages/browser/src/errors/error-codes.ts', import.meta.url), 'utf8');
    const keys = [...source.matchAll(/^\s*(EM\d{4}):/gm)].map((m) => m[1]);
    assert.equal(keys.length, ERROR_LIST.length);
    assert.equal(new Set(keys).size, keys.length, 'a code is written twice');
  });

  test('every row has a code EM + four digits, a meaning and a user message; 401 families are EM0001-EM0019', () => {
    for (const e of ERROR_LIST) {
      assert.match(e.code, /^EM\d{4}$/);
      assert.ok(e.meaning.length > 0 && e.message.length > 0 && e.match.length > 0, e.code);
      assert.ok(/^[A-Z].*\.$/.test(e.message), `${e.code}: message is a sentence`);
      if (e.group === 'session') assert.ok(Number(e.code.slice(2)) <= 19, e.code);
    }
  });

  test('every row has a pre-authentication message: a sentence that never speaks of a session or of logging in again', () => {
    // EM0041's "game session" is a game's time limit, not the user's session.
    const SESSION_WORDING = /(?<!game )session|log in again/i;
    for (const e of ERROR_LIST) {
      assert.ok(/^[A-Z].*\.$/.test(e.preAuthMessage), `${e.code}: pre-authentication message is a sentence`);
      assert.doesNotMatch(e.preAuthMessage, SESSION_WORDING, e.code);
      assert.equal(
        e.preAuthMessage,
        (ERROR_CODES[e.code] as ErrorRow).preAuthMessage ?? e.message,
        `${e.code}: own or the general message`,
      );
    }
    // A session family's general message speaks of the session, so each has a message of its own.
    for (const e of ERROR_LIST.filter((x) => SESSION_WORDING.test(x.message))) {
      assert.notEqual(e.preAuthMessage, e.message, `${e.code} needs a pre-authentication message`);
    }
  });

  test('a listed word belongs to one row only, and only the last row (EM0099) matches any status', () => {
    const owner = new Map<string, string>();
    for (const e of ERROR_LIST) {
      for (const w of [...(e.words ?? []), ...(e.prefixes ?? [])]) {
        const key = w.toLowerCase();
        assert.equal(owner.get(key), undefined, `${w} is listed by ${owner.get(key)} and ${e.code}`);
        owner.set(key, e.code);
      }
    }
    assert.deepEqual(
      ERROR_LIST.filter((e) => e.statuses === 'any').map((e) => e.code),
      ['EM0099'],
    );
    assert.equal(ERROR_LIST.at(-1)?.code, 'EM0099');
  });

  test('lookup by code is total over the registry and undefined for anything else', () => {
    for (const e of ERROR_LIST) {
      assert.equal(getError(e.code), e);
      assert.ok(isErrorCode(e.code));
      assert.equal(ERROR_CODES[e.code].meaning, e.meaning);
    }
    assert.equal(getError('EM0015'), undefined);
    assert.equal(isErrorCode('em0001'), false);
  });
});

describe('spec 7.3: 401 families, one test per listed reason', () => {
  for (const [code, reason] of LISTED_401_REASONS) {
    test(`spec 7.3 ${code}: 401 with reason ${JSON.stringify(reason)}`, () => {
      assert.equal(em401({ reason }), code);
      assert.equal(em401({ reason: reason.toUpperCase() }), code, 'upper case');
      assert.equal(
        em401({ message: `Error: ${reason}.` }),
        code === 'EM0003' && reason.startsWith('exp') && reason !== 'expired' ? 'EM0005' : code,
        'inside a sentence',
      );
      assert.equal(em401(undefined, reason), code, 'raw body');
    });
  }

  test('every word and prefix of the registry is covered by the table above', () => {
    const covered = new Set(LISTED_401_REASONS.map(([, r]) => r.toLowerCase()));
    for (const e of ERROR_LIST) {
      for (const w of [...(e.words ?? []), ...(e.prefixes ?? [])]) {
        const hit = [...covered].some((r) => r.includes(w.toLowerCase()));
        assert.ok(hit, `${e.code} word ${w} has no test`);
      }
    }
  });

  test('EM0003 "anything starting with exp": the reason starts with exp (after white space); a later exp is not enough', () => {
    assert.equal(em401({ reason: 'expirado' }), 'EM0003');
    assert.equal(em401({ reason: '  Expired_session' }), 'EM0003');
    assert.equal(em401({ reason: 'EXP' }), 'EM0003');
    assert.equal(em401({ reason: 'session_expired' }), 'EM0003', 'contains expired');
    assert.equal(em401({ reason: 'jwt expired' }), 'EM0003');
    assert.equal(em401({ reason: 'TokenExpiredError' }), 'EM0003');
    assert.equal(em401({ reason: 'token expirado' }), 'EM0005', 'exp not at the start, no listed word');
  });

  test('EM0004 blocked vs EM0012 user_blocked: user_blocked belongs to EM0012; other "blocked" texts to EM0004', () => {
    assert.equal(em401({ reason: 'user_blocked' }), 'EM0012');
    assert.equal(em401({ reason: 'USER_BLOCKED' }), 'EM0012');
    assert.equal(em401({ reason: 'user_blocked: too many attempts' }), 'EM0012');
    assert.equal(em401({ reason: 'account_blocked' }), 'EM0004');
    assert.equal(em401({ reason: 'User blocked' }), 'EM0004');
    assert.equal(
      em401({ reason: 'user_blocked and device blocked' }),
      'EM0004',
      'a free-standing blocked is still EM0004, first in table order',
    );
    assert.equal(em401({ reason: 'token revoked' }), 'EM0004');
    assert.equal(em401({ reason: 'blacklisted' }), 'EM0004');
  });

  test('first match wins in table order among specific rows', () => {
    assert.equal(em401({ reason: 'no_token token_expired' }), 'EM0001');
    assert.equal(em401({ reason: 'ip_changed; token_expired' }), 'EM0003');
    assert.equal(em401({ reason: 'user_inactive security_error' }), 'EM0012');
  });

  test('misspellings are matched as written; the corrected spelling is not a listed word', () => {
    assert.equal(em401({ reason: 'wrrong_hf2' }), 'EM0002');
    assert.equal(em401({ reason: 'wrong_hf2' }), 'EM0005');
    assert.equal(em401({ reason: 'Token Invalido' }), 'EM0002');
    assert.equal(em401({ reason: 'Wrong auth refresh!' }), 'EM0014');
    assert.equal(em401({ reason: 'Wrong auth refresh' }), 'EM0005');
  });

  test('EM0005: a 401 whose reason matches no 401 row, or with no body at all', () => {
    assert.equal(em401({ reason: 'something_else' }), 'EM0005');
    assert.equal(em401({ message: 'Unauthorized' }), 'EM0005', 'bare unauthorized is not EM0012');
    assert.equal(em401({ message: 'Unauthenticated.' }), 'EM0005');
    assert.equal(em401({}), 'EM0005');
    assert.equal(em401(null), 'EM0005');
    assert.equal(em401(undefined), 'EM0005');
    assert.equal(em401(''), 'EM0005');
    assert.equal(em401([]), 'EM0005');
    assert.equal(em401(undefined, '<html><body>401 Authorization Required</body></html>'), 'EM0005');
  });
});

describe('spec 7.3 and docs/behaviour.md "Clarifications of the specification": reason priority (first present field, not first match)', () => {
  test('reason > code > error > message > detail > status string > raw body', () => {
    const full = {
      reason: 'ip_changed',
      code: 'device_changed',
      error: 'geo_mismatch',
      message: 'kyc_required',
      detail: 'legacy_version',
      status: 'security_error',
    };
    const raw = 'wrong_token';
    assert.equal(em401(full, raw), 'EM0006');
    const { reason: _r, ...noReason } = full;
    assert.equal(em401(noReason, raw), 'EM0007');
    const { code: _c, ...noCode } = noReason;
    assert.equal(em401(noCode, raw), 'EM0008');
    const { error: _e, ...noError } = noCode;
    assert.equal(em401(noError, raw), 'EM0009');
    const { message: _m, ...noMessage } = noError;
    assert.equal(em401(noMessage, raw), 'EM0010');
    const { detail: _d, ...noDetail } = noMessage;
    assert.equal(em401(noDetail, raw), 'EM0013');
    assert.equal(em401({}, raw), 'EM0002');
  });

  test('the first present field decides even when it matches nothing (spec 7.4.1): an envelope error outranks the reason below it', () => {
    assert.equal(em401({ ok: false, error: 'upstream_error', detail: 'token_expired' }), 'EM0005');
    assert.equal(em401({ reason: 'whatever', message: 'token_expired' }), 'EM0005');
    assert.equal(extractReason({ ok: false, error: 'upstream_error', detail: 'token_expired' }), 'upstream_error');
  });

  test('absent means not a non-empty string: numbers, booleans, null, objects and blank strings are skipped', () => {
    assert.equal(extractReason({ reason: '', code: 401, error: true, message: 'token_expired' }), 'token_expired');
    assert.equal(extractReason({ reason: '   ', code: null, error: { x: 1 }, message: ['a'], detail: 'ip_changed' }), 'ip_changed');
    assert.equal(em401({ code: 401, message: 'Token expired' }), 'EM0003');
  });

  test('detail.*: a string, or the first string field of a detail object (reason, code, error, message, then others)', () => {
    assert.equal(extractReason({ detail: 'token_expired' }), 'token_expired');
    assert.equal(extractReason({ detail: { message: 'm', reason: 'r' } }), 'r');
    assert.equal(extractReason({ detail: { message: 'm', code: 'c' } }), 'c');
    assert.equal(extractReason({ detail: { message: 'm' } }), 'm');
    assert.equal(extractReason({ detail: { hint: 1, msg: 'first other', more: 'x' } }), 'first other');
    assert.equal(extractReason({ detail: [{ msg: 'Not authenticated', type: 'auth' }] }), 'Not authenticated');
    assert.equal(extractReason({ detail: ['user_blocked'] }), 'user_blocked');
    assert.equal(extractReason({ detail: {}, status: 'token_expired' }), 'token_expired');
    assert.equal(em401({ detail: { reason: 'device_mismatch' } }), 'EM0007');
  });

  test('a top-level status string is read; a numeric status is not', () => {
    assert.equal(em401({ status: 'token_expired' }), 'EM0003');
    assert.equal(extractReason({ status: 401 }), null);
    assert.equal(extractReason({ status: 401 }, 'raw'), 'raw');
  });

  test('data as a string is the raw body; rawBody wins when both are strings', () => {
    assert.equal(em401('user_blocked'), 'EM0012');
    assert.equal(extractReason('from data'), 'from data');
    assert.equal(extractReason('from data', 'from raw'), 'from raw');
    assert.equal(extractReason(null, '  padded  '), 'padded');
  });

  test('a raw body holding a JSON object is read by the same priority when data is not an object', () => {
    assert.equal(em401(undefined, '{"error":"upstream_error","reason":"ip_changed"}'), 'EM0006');
    assert.equal(em401('{"reason":"x","message":"token_expired"}'), 'EM0005');
    assert.equal(em401(undefined, ' {not json token_expired'), 'EM0003', 'unparsable: the text itself');
    assert.equal(em401({ reason: 'ip_changed' }, '{"reason":"token_expired"}'), 'EM0006', 'parsed data wins');
  });

  test('reasons are trimmed and cut to MAX_REASON_LENGTH characters', () => {
    const long = `${'a'.repeat(MAX_REASON_LENGTH + 100)}token_expired`;
    const r = extractReason({ reason: long });
    assert.equal(r?.length, MAX_REASON_LENGTH);
    assert.equal(em401({ reason: long }), 'EM0005', 'a word beyond the limit is not scanned');
    assert.equal(em401({ reason: `${'a'.repeat(MAX_REASON_LENGTH - 20)}token_expired` }), 'EM0003');
  });
});

describe('spec 7.3: status buckets', () => {
  const buckets: readonly (readonly [number, ErrorCode])[] = [
    [403, 'EM0011'],
    [429, 'EM0021'],
    [409, 'EM0022'],
    [500, 'EM0031'],
    [502, 'EM0032'],
    [503, 'EM0032'],
    [504, 'EM0032'],
    [202, 'EM0041'],
    [0, 'EM0042'],
  ];
  for (const [status, code] of buckets) {
    test(`spec 7.3 ${code}: status ${status}, whatever the body`, () => {
      for (const data of [undefined, null, {}, { reason: 'token_expired' }, { reason: 'user_blocked' }, 'text']) {
        assert.equal(classifyError({ status, data, url: '/auth/login' }).errorCode, code, JSON.stringify(data));
      }
    });
  }

  test('spec 7.3 EM0099: any other status, with or without a recognisable reason', () => {
    for (const status of [200, 201, 204, 301, 400, 402, 404, 405, 408, 410, 418, 422, 451, 501, 505, 599, 999, -1]) {
      assert.equal(classifyError({ status, data: { reason: 'token_expired' }, url: '/x' }).errorCode, 'EM0099', String(status));
      assert.equal(classifyError({ status, url: '/x' }).errorCode, 'EM0099', String(status));
    }
  });

  test('spec 7.3 EM0099: a status that is not an integer', () => {
    for (const status of [Number.NaN, 401.5, Number.POSITIVE_INFINITY, undefined, null, '401']) {
      assert.equal(classifyError({ status: status as number, data: { reason: 'token_expired' } }).errorCode, 'EM0099', String(status));
    }
  });

  test('errorCodeForReason is the EM half of the classifier', () => {
    assert.equal(errorCodeForReason(401, 'token_expired'), 'EM0003');
    assert.equal(errorCodeForReason(401, null), 'EM0005');
    assert.equal(errorCodeForReason(403, 'token_expired'), 'EM0011');
    assert.equal(errorCodeForReason(418, undefined), 'EM0099');
  });
});

describe('spec 7.3: isSessionEndingErrorCode (browser forced logout)', () => {
  test('true for the 401 families EM0001-EM0014 except EM0011 (a 403); false otherwise', () => {
    const ending = ERROR_LIST.filter((e) => isSessionEndingErrorCode(e.code)).map((e) => e.code);
    assert.deepEqual(ending, [
      'EM0001',
      'EM0002',
      'EM0003',
      'EM0004',
      'EM0005',
      'EM0006',
      'EM0007',
      'EM0008',
      'EM0009',
      'EM0010',
      'EM0012',
      'EM0013',
      'EM0014',
    ]);
    for (const c of ['EM0011', 'EM0021', 'EM0022', 'EM0031', 'EM0032', 'EM0041', 'EM0042', 'EM0099']) {
      assert.equal(isSessionEndingErrorCode(c), false, c);
    }
    for (const c of ['EM0015', 'em0001', '', 'EP0001', null, undefined, 1]) {
      assert.equal(isSessionEndingErrorCode(c), false, String(c));
    }
  });
});

describe('spec 7.1-7.3: classifyError', () => {
  test('returns endpointCode, errorCode, ref and the reason', () => {
    assert.deepEqual(
      classifyError({
        status: 401,
        data: { reason: 'token_expired' },
        rawBody: '{"reason":"token_expired"}',
        url: 'https://bff.example.com/api/v2/auth/user-profile?check_spa_again=1',
      }),
      { endpointCode: 'EP0003', errorCode: 'EM0003', ref: 'EP0003-EM0003', reason: 'token_expired' },
    );
  });

  test('a 401 from the proxy itself: { reason: no_token } on a proxy route is EP07xx-EM0001 (spec 7.4.3)', () => {
    const r = classifyError({ status: 401, data: { reason: 'no_token' }, url: '/api/wallet/refresh', method: 'POST' });
    assert.equal(r.ref, 'EP0710-EM0001');
  });

  test('network failure: status 0 on an unknown host', () => {
    assert.equal(classifyError({ status: 0, data: null, rawBody: null, url: 'https://elsewhere.example/x' }).ref, 'EP0000-EM0042');
  });

  test('the method, when given, takes part in EP matching', () => {
    assert.equal(classifyError({ status: 500, url: '/auth/login', method: 'POST' }).ref, 'EP0001-EM0031');
    assert.equal(classifyError({ status: 500, url: '/auth/login', method: 'GET' }).ref, 'EP0000-EM0031');
    assert.equal(classifyError({ status: 500, url: '/auth/login' }).ref, 'EP0001-EM0031');
  });

  test('odd input never throws', () => {
    assert.equal(classifyError({ status: 401 }).ref, 'EP0000-EM0005');
    assert.equal(classifyError({} as never).ref, 'EP0000-EM0099');
    assert.equal(classifyError(undefined as never).ref, 'EP0000-EM0099');
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    cyclic.detail = cyclic;
    assert.equal(classifyError({ status: 401, data: cyclic }).errorCode, 'EM0005');
  });
});

describe('linear time: 1 MB inputs classify in well under a second', () => {
  const MB = 1 << 20;
  const inputs: [string, string][] = [
    ['plain letters', 'a'.repeat(MB)],
    ['repeated exp', 'ex'.repeat(MB / 2)],
    ['repeated user_blocked fragments', 'user_blocke'.repeat(MB / 11)],
    ['repeated shadowed blocked', 'user_blocked'.repeat(MB / 12)],
    ['repeated wrong auth prefixes', 'Wrong auth '.repeat(MB / 11)],
    ['repeated no_ prefixes', 'no_no_no_'.repeat(MB / 9)],
    ['white space', ' '.repeat(MB)],
    ['JSON-looking object', `{${'"a":1,'.repeat(MB / 6)}`],
    ['slashes', '/'.repeat(MB)],
    ['segments', '/a'.repeat(MB / 2)],
    ['scheme-like', 'h'.repeat(MB)],
  ];
  for (const [name, text] of inputs) {
    test(`${name}: reason, raw body and URL`, () => {
      const start = performance.now();
      classifyError({ status: 401, data: { reason: text }, url: text });
      classifyError({ status: 401, data: undefined, rawBody: text, url: `https://${text}` });
      classifyError({ status: 401, data: text, url: `/api/${text}?${text}` });
      const ms = performance.now() - start;
      assert.ok(ms < 2_000, `${name} took ${ms.toFixed(0)} ms`);
    });
  }

  test('a 1 MB JSON body whose reason is found at the end', () => {
    const body = JSON.stringify({ pad: 'x'.repeat(MB), reason: 'user_blocked' });
    const start = performance.now();
    assert.equal(classifyError({ status: 401, rawBody: body, url: '/auth/login' }).errorCode, 'EM0012');
    assert.ok(performance.now() - start < 2_000);
  });
});

/** A concrete URL of a route's path pattern: each `{param}` one segment, a final `*` two. */
const concrete = (path: string) => path.replace(/\{[^}]+\}/g, 'x1').replace(/\*$/, 'a/b');

describe('classifyProxyError: the browser SDK classifies its calls on the internal rows alone (PROXY_ENDPOINT_CODES)', () => {
  const beyondTheClient = [
    ['GET', '/api/auth/session'],
    ['GET', '/api/search/unified?q=x'],
    ['POST', '/api/dev/proxy/__sandbox/sessions/expire'],
    ['GET', '/api/album/42'],
    ['PUT', '/api/auth/login'],
    ['GET', 'http://127.0.0.1:3000/api/wallet/refresh'],
    ['GET', '/casino/api/wallet/refresh'],
    ['GET', '/favicon.ico'],
  ] as const;
  const cases = [...ROUTES.map((r) => [r.method, concrete(r.path)] as const), ...beyondTheClient];

  test('the same EP code as the whole registry for every route of the client and the other /api/* URLs', () => {
    assert.ok(ROUTES.length > 60, `${ROUTES.length} client routes`);
    for (const [method, url] of cases) {
      assert.equal(proxyEndpointCodeFor(method, url), endpointCodeFor(method, url), `${method} ${url}`);
      assert.equal(proxyEndpointCodeFor(null, url), endpointCodeFor(null, url), `${url} without a method`);
    }
    assert.equal(proxyEndpointCodeFor('GET', '/api/games/list'), 'EP0717');
    assert.equal(proxyEndpointCodeFor('GET', '/api/auth/session'), 'EP0799');
    assert.equal(proxyEndpointCodeFor('GET', '/favicon.ico'), 'EP0000');
  });

  test('the same classification as classifyError: statuses, reasons, a refusal naming a BFF code', () => {
    const failures = [
      { status: 401, data: { reason: 'token_expired' } },
      { status: 401, data: { ok: false, error: 'no_token' } },
      { status: 403, data: { ok: false, error: 'csrf_rejected' } },
      { status: 502, rawBody: '<html><body>Bad Gateway</body></html>' },
      { status: 503, data: { ok: false, error: 'upstream_busy', endpoint: 'EP0034' } },
      { status: 503, data: { ok: false, error: 'upstream_circuit_open', endpoint: 'EP0142' } },
      { status: 0 },
    ];
    for (const [method, url] of cases) {
      for (const failure of failures) {
        assert.deepEqual(
          classifyProxyError({ ...failure, method, url }),
          classifyError({ ...failure, method, url }),
          `${method} ${url} ${JSON.stringify(failure)}`,
        );
      }
    }
    assert.equal(
      classifyProxyError({ status: 503, data: { ok: false, error: 'upstream_busy', endpoint: 'EP0034' }, url: '/api/wallet/refresh' })
        .endpointCode,
      'EP0034',
      'the BFF endpoint the refusal names',
    );
  });

  test("the internal rows are the registry's EP07xx rows, in its order, and every EP07xx row is one of them", () => {
    const internal = ENDPOINT_LIST.filter((e) => e.group === 'internal').map(({ code, methods, path, meaning }) => ({
      code,
      methods,
      path,
      meaning,
    }));
    assert.deepEqual(
      internal,
      Object.entries(PROXY_ENDPOINT_CODES).map(([code, row]) => ({ code, ...row })),
    );
    assert.equal(internal.at(-1)?.code, 'EP0799');
    for (const e of ENDPOINT_LIST.filter((row) => row.group !== 'internal' && row.path !== null)) {
      assert.ok(!/^\/(api\/|\{|\*)/.test(e.path ?? ''), `${e.code} ${e.path}: no BFF row may match an /api/* URL before the internal rows`);
    }
  });
});

test('docs/browser-sdk.md: the endpointCode row of ProxyError says what the client gives', () => {
  const doc = readFileSync(new URL('../../docs/browser-sdk.md', import.meta.url), 'utf8');
  const row = doc.split('\n').find((line) => line.startsWith('  | `endpointCode` |')) ?? '';
  const pairs = [...row.matchAll(/`(?:(GET|POST|PUT|PATCH|DELETE) )?(\/api\/[^`]*)` → (EP\d{4})/g)].map(
    ([, method, path, code]) => [method ?? null, path ?? '', code] as const,
  );
  const others = /any other `\/api\/\*` \(([^)]*)\) → (EP\d{4})/.exec(row);
  assert.ok(pairs.length >= 15 && others, row);
  for (const path of [...(others[1] ?? '').matchAll(/`([^`]+)`/g)].map((m) => m[1] ?? '')) pairs.push([null, path, others[2] ?? '']);
  for (const [method, path, code] of pairs) assert.equal(proxyEndpointCodeFor(method, concrete(path)), code, `${method ?? ''} ${path}`);
  // Every code the client can give is named in the row.
  for (const code of Object.keys(PROXY_ENDPOINT_CODES)) assert.ok(row.includes(code), `${code} in the row`);
});
