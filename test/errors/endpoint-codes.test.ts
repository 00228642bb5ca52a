import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import {
  classifyError,
  ENDPOINT_CODES,
  ENDPOINT_GROUPS,
  ENDPOINT_LIST,
  type EndpointCode,
  endpointCodeFor,
  endpointGroupOf,
  getEndpoint,
  isEndpointCode,
  normalizeEndpointPath,
} from '../../src/errors/index.js';

// One sample call per row of spec 7.2, written by hand from the specification (not derived
// from the registry's patterns): [code, method, path].
const SAMPLES: readonly (readonly [EndpointCode, string, string])[] = [
  // Auth
  ['EP0001', 'POST', '/auth/login'],
  ['EP0002', 'POST', '/auth/logout'],
  ['EP0003', 'GET', '/auth/user-profile'],
  ['EP0004', 'POST', '/users/refresh-token'],
  ['EP0005', 'POST', '/bff/register-simplified'],
  ['EP0006', 'POST', '/documents/validate'],
  ['EP0007', 'POST', '/auth/passwords/reset/options'],
  ['EP0008', 'POST', '/auth/passwords/reset/by-email'],
  ['EP0009', 'POST', '/auth/passwords/reset/by-sms'],
  ['EP0010', 'POST', '/auth/passwords/reset/validate-code'],
  ['EP0011', 'POST', '/auth/passwords/reset/confirm'],
  ['EP0012', 'POST', '/auth/logout-auto'],
  ['EP0013', 'POST', '/auth/register'],
  ['EP0014', 'POST', '/auth/register/simplified'],
  ['EP0015', 'POST', '/bff/social/google'],
  ['EP0016', 'POST', '/bff/social/google/registerSimplified'],
  // User / account
  ['EP0020', 'POST', '/users/update/123'],
  ['EP0021', 'GET', '/bff/users/address-by-user'],
  ['EP0022', 'PATCH', '/bff/users/self-email'],
  ['EP0023', 'PATCH', '/bff/users/add-phone'],
  ['EP0024', 'PATCH', '/bff/users/update-address'],
  ['EP0025', 'PATCH', '/bff/users/self-contracts'],
  ['EP0026', 'PATCH', '/bff/users/self-mkt'],
  ['EP0027', 'PATCH', '/bff/users/update-user-info-metadata'],
  ['EP0028', 'POST', '/users/change-password/123'],
  ['EP0029', 'POST', '/bff/users/check-password'],
  ['EP0030', 'PATCH', '/bff/users/self-two-factor'],
  ['EP0031', 'DELETE', '/bff/users/account-social'],
  ['EP0032', 'GET', '/bff/users/login-history'],
  ['EP0033', 'GET', '/bff/games/user-last-casino-games-dl'],
  ['EP0034', 'GET', '/users/wallet'],
  ['EP0035', 'GET', '/bonus/rollover'],
  ['EP0036', 'GET', '/bonus/rollover-accomplished'],
  ['EP0037', 'POST', '/documents/selfie'],
  ['EP0038', 'PATCH', '/bff/users/update-limits'],
  ['EP0039', 'PATCH', '/bff/users/timeout-limits'],
  ['EP0040', 'PATCH', '/bff/users/self-exclusion'],
  ['EP0041', 'POST', '/apicep'],
  ['EP0042', 'POST', '/income-report/generate'],
  ['EP0043', 'GET', '/income-report/available-years'],
  ['EP0044', 'GET', '/income-report/77'],
  ['EP0045', 'PATCH', '/bff/users/add-address'],
  ['EP0046', 'PATCH', '/bff/users/add-initial-data'],
  ['EP0047', 'PATCH', '/bff/users/self-phone'],
  ['EP0048', 'POST', '/bff/users/send-email'],
  ['EP0049', 'POST', '/bff/users/validade-email-code'],
  ['EP0050', 'POST', '/bff/users/send-sms'],
  ['EP0051', 'POST', '/bff/users/validade-sms-code'],
  ['EP0052', 'POST', '/bff/users/list-referrals'],
  ['EP0053', 'PATCH', '/bff/users/update-pending-data'],
  ['EP0054', 'GET', '/bff/users/support-desk/create-or-update-user'],
  ['EP0055', 'POST', '/bff/validate-confirmation'],
  ['EP0056', 'POST', '/users/list-referrals'],
  // Wallet
  ['EP0070', 'POST', '/bff/transactions'],
  ['EP0071', 'GET', '/transactions/cashback'],
  ['EP0072', 'POST', '/bonus/transfer'],
  ['EP0073', 'POST', '/cashback/transfer'],
  ['EP0074', 'GET', '/withdraw/987/generate'],
  // Payments
  ['EP0090', 'GET', '/payment-providers'],
  ['EP0091', 'POST', '/wallet/add-credit'],
  ['EP0092', 'GET', '/wallet/charge/tx-42'],
  ['EP0093', 'POST', '/new-withdraws'],
  ['EP0094', 'GET', '/bff/users/bank-list'],
  ['EP0095', 'POST', '/pix-keys/user-key'],
  ['EP0096', 'POST', '/pix-keys/update-user-key-v2'],
  ['EP0097', 'GET', '/mex-bank-accounts/user-account'],
  ['EP0098', 'POST', '/mex-bank-accounts/store'],
  ['EP0099', 'GET', '/generic-bank-accounts/user-account'],
  ['EP0100', 'POST', '/generic-bank-accounts/store'],
  ['EP0101', 'GET', '/coupons/WELCOME10'],
  // KYC, rewards
  ['EP0120', 'GET', '/bff/users/kyc'],
  ['EP0130', 'GET', '/bff/gamification/rewards'],
  ['EP0131', 'POST', '/bff/gamification/redeem'],
  // Games / casino
  ['EP0140', 'GET', '/casino-games/page/2'],
  ['EP0141', 'GET', '/casino-games/home'],
  ['EP0142', 'GET', '/casino-games/list/base'],
  ['EP0143', 'GET', '/casino-games/list'],
  ['EP0144', 'GET', '/casino-games'],
  ['EP0145', 'GET', '/casino-games/filter'],
  ['EP0146', 'GET', '/start-game-v2'],
  ['EP0147', 'GET', '/bff/games/top-wins-dl'],
  ['EP0148', 'GET', '/bff/games/top-wins-game-dl/sweet-bonanza'],
  ['EP0149', 'GET', '/bff/games/last-wins'],
  ['EP0150', 'GET', '/bff/games/game-high-payers-dl'],
  ['EP0151', 'GET', '/bff/games/statistics-by-period-dl/sweet-bonanza'],
  ['EP0152', 'GET', '/bff/games/statistics-dl/sweet-bonanza'],
  ['EP0153', 'GET', '/bff/games/game-vote/sweet-bonanza'],
  ['EP0154', 'GET', '/bff/games/game-vote-count/sweet-bonanza'],
  ['EP0155', 'POST', '/casino-game-votes/store'],
  ['EP0156', 'DELETE', '/casino-game-votes/destroy/55'],
  ['EP0157', 'GET', '/bff/favorite-games'],
  ['EP0158', 'PUT', '/bff/favorite-games/toggle'],
  ['EP0159', 'GET', '/casino-game-votes'],
  ['EP0160', 'GET', '/bff/games/statistics-dl'],
  // Sports, brand / platform
  ['EP0190', 'GET', '/core-sportbook/search'],
  ['EP0191', 'GET', '/core-sportbook/launch'],
  ['EP0192', 'GET', '/core-sportbook/anonymous-launch'],
  ['EP0193', 'POST', '/sportsbook-partner-a/get-jwt'],
  ['EP0194', 'GET', '/sportsbook-partner-b/token'],
  ['EP0195', 'GET', '/core-sportbook/events/12'],
  ['EP0200', 'GET', '/appearance'],
  ['EP0201', 'GET', '/bff/features'],
  ['EP0202', 'POST', '/bookmaker-settings'],
  ['EP0203', 'GET', '/getlegalterm'],
  // Internal proxy routes
  ['EP0700', 'POST', '/api/auth/login'],
  ['EP0701', 'POST', '/api/auth/logout'],
  ['EP0702', 'GET', '/api/auth/profile'],
  ['EP0703', 'POST', '/api/auth/register'],
  ['EP0704', 'POST', '/api/auth/refresh'],
  ['EP0705', 'POST', '/api/auth/recovery'],
  ['EP0706', 'POST', '/api/auth/social/google'],
  ['EP0707', 'POST', '/api/auth/validate-document'],
  ['EP0710', 'POST', '/api/wallet/refresh'],
  ['EP0711', 'POST', '/api/payments/deposit'],
  ['EP0712', 'PATCH', '/api/user/update-profile'],
  ['EP0713', 'GET', '/api/kyc/status'],
  ['EP0714', 'POST', '/api/rewards/list'],
  ['EP0715', 'POST', '/api/validation/email/send'],
  ['EP0716', 'GET', '/api/sports/launch'],
  ['EP0717', 'GET', '/api/games/start'],
  ['EP0718', 'PUT', '/api/favorites'],
  ['EP0719', 'GET', '/api/income-report/status/9'],
  ['EP0720', 'POST', '/api/logs/auth-logout'],
  ['EP0721', 'POST', '/api/auth/recheck-spa'],
  ['EP0799', 'POST', '/api/album/open-pack'],
  // Unrecognised
  ['EP0000', 'GET', '/somewhere/else'],
];

/** The forms under which a sample path must still give its code (spec 7.2). */
function variants(path: string): [string, string][] {
  return [
    ['as is', path],
    ['/v1/ prefix', `/v1${path}`],
    ['/v2/ prefix', `/v2${path}`],
    ['/api/v2/ prefix', `/api/v2${path}`],
    ['query string', `${path}?a=1&b=x/y`],
    ['fragment', `${path}#frag`],
    ['trailing slash', `${path}/`],
    ['trailing slash and query', `${path}/?a=1`],
    ['absolute URL', `https://bff.example.com${path}`],
    ['absolute URL, port, version prefix and query', `http://10.0.0.1:8080/v1${path}?a=1`],
    ['protocol-relative URL', `//cdn.example.com${path}`],
    ['relative without a leading slash', path.slice(1)],
  ];
}

describe('spec 7.2: EP registry as data', () => {
  test('the sample table covers every EP row of the registry, in the same order', () => {
    assert.deepEqual(
      SAMPLES.map(([code]) => code),
      ENDPOINT_LIST.map((e) => e.code),
    );
  });

  test('spec 7.2 has 125 table rows plus EP0000: the registry holds 126 codes', () => {
    assert.equal(ENDPOINT_LIST.length, 126);
    assert.equal(Object.keys(ENDPOINT_CODES).length, 126);
  });

  test('every code is EP + four digits, inside its group range, ascending within its group; EP0000 last', () => {
    let previous = -1;
    let previousGroup = '';
    for (const e of ENDPOINT_LIST) {
      assert.match(e.code, /^EP\d{4}$/);
      const n = Number(e.code.slice(2));
      const group = endpointGroupOf(n);
      assert.equal(group, e.group, e.code);
      const g = ENDPOINT_GROUPS[e.group];
      assert.ok(n >= g.first && n <= g.last, `${e.code} outside ${g.title}`);
      if (e.group === previousGroup) assert.ok(n > previous, `${e.code} out of order`);
      previous = n;
      previousGroup = e.group;
    }
    assert.equal(ENDPOINT_LIST.at(-1)?.code, 'EP0000');
  });

  test('the source writes each code once (a duplicate key would silently replace a row)', () => {
    // The internal rows are written in proxy-endpoint-codes.ts and spread into the registry.
    const source = ['endpoint-codes.ts', 'proxy-endpoint-codes.ts']
      .map((file) => readFileSync(new URL(`../../packages/browser/src/errors/${file}`, import.meta.url), 'utf8'))
      .join('\n');
    const keys = [...source.matchAll(/^\s*(EP\d{4}):/gm)].map((m) => m[1]);
    assert.equal(keys.length, ENDPOINT_LIST.length);
    assert.equal(new Set(keys).size, keys.length, 'a code is written twice');
  });

  test('no two rows share a method and pattern (a second one could never match)', () => {
    const seen = new Map<string, string>();
    for (const e of ENDPOINT_LIST) {
      const key = `${e.methods === 'any' ? 'any' : e.methods.join('/')} ${e.path}`;
      assert.equal(seen.get(key), undefined, `${e.code} repeats ${key}`);
      seen.set(key, e.code);
    }
  });

  test('patterns are well formed: absolute, no query, wildcard only in the last segment', () => {
    for (const e of ENDPOINT_LIST) {
      if (e.code === 'EP0000') {
        assert.equal(e.path, null);
        continue;
      }
      assert.ok(e.path?.startsWith('/'), e.code);
      assert.ok(!/[?#\s]/.test(e.path ?? ''), e.code);
      const segments = (e.path ?? '').split('/').slice(1);
      segments.forEach((s, i) => {
        assert.ok(s !== '', `${e.code} has an empty segment`);
        if (s.includes('*')) assert.ok(i === segments.length - 1 && s.endsWith('*'), `${e.code}: * must end the pattern`);
        if (s.includes('{')) assert.match(s, /^\{[a-z]+\}$/, e.code);
      });
      assert.notEqual(e.methods.length, 0, e.code);
    }
  });

  test('lookup by code is total over the registry and undefined for anything else', () => {
    for (const e of ENDPOINT_LIST) {
      assert.equal(getEndpoint(e.code), e);
      assert.ok(isEndpointCode(e.code));
    }
    assert.equal(getEndpoint('EP9999'), undefined);
    assert.equal(getEndpoint('ep0001'), undefined);
    assert.equal(isEndpointCode('EP0001 '), false);
    assert.equal(isEndpointCode(1), false);
  });

  test('the registry is frozen data', () => {
    assert.ok(Object.isFrozen(ENDPOINT_LIST));
    assert.ok(Object.isFrozen(ENDPOINT_LIST[0]));
  });
});

describe('spec 7.2: EP matching, one sample per row and its variants', () => {
  for (const [code, method, path] of SAMPLES) {
    test(`spec 7.2 ${code}: ${method} ${path}`, () => {
      for (const [name, url] of variants(path)) {
        assert.equal(endpointCodeFor(method, url), code, `${name}: ${method} ${url}`);
        assert.equal(endpointCodeFor(undefined, url), code, `${name}, no method: ${url}`);
      }
    });
  }
});

describe('spec 7.2: EP matching rules', () => {
  test('first match wins: /documents/validate is EP0006, not /documents/{type} (EP0037)', () => {
    assert.equal(endpointCodeFor('POST', '/documents/validate'), 'EP0006');
    assert.equal(endpointCodeFor('POST', '/documents/proof-of-address'), 'EP0037');
  });

  test('{id}, {slug}, {type}, {page}, {provider} match exactly one segment', () => {
    assert.equal(endpointCodeFor('POST', '/users/update'), 'EP0000');
    assert.equal(endpointCodeFor('POST', '/users/update/1/2'), 'EP0000');
    assert.equal(endpointCodeFor('GET', '/withdraw/generate'), 'EP0000');
    assert.equal(endpointCodeFor('GET', '/withdraw/1/2/generate'), 'EP0000');
    assert.equal(endpointCodeFor('GET', '/casino-games/page'), 'EP0000');
    assert.equal(endpointCodeFor('GET', '/casino-games/page/2/3'), 'EP0000');
    assert.equal(endpointCodeFor('GET', '/bff/games/statistics-dl'), 'EP0160', 'its own row, not EP0152 with an empty {slug}');
    assert.equal(endpointCodeFor('GET', '/bff/games/statistics-dl/a/b'), 'EP0000');
    assert.equal(endpointCodeFor('POST', '/api/auth/social'), 'EP0799');
    assert.equal(endpointCodeFor('POST', '/api/auth/social/google/extra'), 'EP0799');
  });

  test('the casino-games rows do not shadow each other', () => {
    assert.equal(endpointCodeFor('GET', '/casino-games/list/?categories[]=slots&page=2'), 'EP0143');
    assert.equal(endpointCodeFor('GET', '/casino-games/list/base/'), 'EP0142');
    assert.equal(endpointCodeFor('GET', '/casino-games?slug=sweet-bonanza'), 'EP0144');
    assert.equal(endpointCodeFor('GET', '/casino-games/home'), 'EP0141');
    assert.equal(endpointCodeFor('GET', '/casino-games/unknown'), 'EP0000');
  });

  test('/bff/users/kyc* covers its query and every sub-route (EP0120)', () => {
    for (const url of [
      '/bff/users/kyc?source=deposit',
      '/bff/users/kyc/recovery?x=1',
      '/bff/users/kyc/status?kyc_id=abc',
      '/bff/users/kyc/status/recovery?kyc_id=abc',
      'https://bff.example.com/api/v2/bff/users/kyc/status/',
    ]) {
      assert.equal(endpointCodeFor('GET', url), 'EP0120', url);
      assert.equal(endpointCodeFor('POST', url), 'EP0120', url);
    }
    assert.equal(endpointCodeFor('GET', '/bff/users'), 'EP0000');
  });

  test('/api/* routes: the area rows (EP0710-EP0719) cover their sub-routes; EP0799 is the fallback', () => {
    assert.equal(endpointCodeFor('GET', '/api/wallet'), 'EP0710');
    assert.equal(endpointCodeFor('POST', '/api/wallet/a/b/c'), 'EP0710');
    assert.equal(endpointCodeFor('POST', '/api/payments/bank-account'), 'EP0711');
    assert.equal(endpointCodeFor('GET', '/api/user/login-history?page=2'), 'EP0712');
    assert.equal(endpointCodeFor('GET', '/api/kyc/start'), 'EP0713');
    assert.equal(endpointCodeFor('POST', '/api/rewards/redeem'), 'EP0714');
    assert.equal(endpointCodeFor('PATCH', '/api/validation/sms/change'), 'EP0715');
    assert.equal(endpointCodeFor('POST', '/api/sports/partner-a-jwt'), 'EP0716');
    assert.equal(endpointCodeFor('GET', '/api/games/category/slots'), 'EP0717');
    assert.equal(endpointCodeFor('GET', '/api/favorites'), 'EP0718');
    assert.equal(endpointCodeFor('GET', '/api/favorites/'), 'EP0718');
    assert.equal(endpointCodeFor('GET', '/api/favorites/extra'), 'EP0799');
    assert.equal(endpointCodeFor('GET', '/api/income-report/available-years'), 'EP0719');
    for (const url of ['/api/core-sportbook/x', '/api/search/unified', '/api/version', '/api', '/api/']) {
      assert.equal(endpointCodeFor('GET', url), 'EP0799', url);
    }
    assert.equal(endpointCodeFor('GET', 'https://www.example.com/api/album/bootstrap?x=1'), 'EP0799');
  });

  test('anything else is EP0000: other paths, other prefixes, missing or odd URLs', () => {
    for (const url of [
      '',
      '/',
      '?a=1',
      'https://bff.example.com',
      'https://bff.example.com/?a=/auth/login',
      '/bff-prefix/auth/login',
      '/v3/auth/login',
      '/AUTH/LOGIN',
      '/auth/login-extra',
      '/apix/wallet',
      '/users/me/progress',
    ]) {
      assert.equal(endpointCodeFor('POST', url), 'EP0000', JSON.stringify(url));
    }
    assert.equal(endpointCodeFor('GET', undefined), 'EP0000');
    assert.equal(endpointCodeFor('GET', null), 'EP0000');
    assert.equal(endpointCodeFor('GET', 42 as unknown as string), 'EP0000');
  });

  test('version prefixes: only one, only at the start, only /v1/, /v2/, /api/v2/', () => {
    assert.equal(normalizeEndpointPath('/api/v2/auth/login'), '/auth/login');
    assert.equal(normalizeEndpointPath('/v1/auth/login'), '/auth/login');
    assert.equal(normalizeEndpointPath('/v2/api/wallet/x'), '/api/wallet/x');
    assert.equal(normalizeEndpointPath('/api/v1/auth/login'), '/api/v1/auth/login');
    assert.equal(normalizeEndpointPath('/x/v1/auth/login'), '/x/v1/auth/login');
    assert.equal(endpointCodeFor('POST', '/api/v2/api/auth/login'), 'EP0700');
  });

  test('URL objects, doubled slashes and surrounding white space are accepted', () => {
    assert.equal(endpointCodeFor('POST', new URL('https://bff.example.com/v1/auth/login?x=1')), 'EP0001');
    assert.equal(endpointCodeFor('POST', 'https://bff.example.com//auth//login'), 'EP0001');
    assert.equal(endpointCodeFor('POST', '  /auth/login \n'), 'EP0001');
    assert.equal(normalizeEndpointPath('https://user:pw@bff.example.com:8443/./auth/login/#x'), '/auth/login');
  });

  test('with a method, a row naming other methods does not match: /api falls to EP0799, the rest to EP0000', () => {
    assert.equal(endpointCodeFor('GET', '/api/auth/login'), 'EP0799');
    assert.equal(endpointCodeFor('GET', '/auth/login'), 'EP0000');
    assert.equal(endpointCodeFor('PUT', '/bff/users/account-social'), 'EP0000');
    for (const m of ['GET', 'POST', 'DELETE']) assert.equal(endpointCodeFor(m, '/bff/users/account-social'), 'EP0031');
  });

  test('methods: case-insensitive, HEAD counts as GET, empty or missing means path only', () => {
    assert.equal(endpointCodeFor('post', '/auth/login'), 'EP0001');
    assert.equal(endpointCodeFor(' Post ', '/auth/login'), 'EP0001');
    assert.equal(endpointCodeFor('HEAD', '/auth/user-profile'), 'EP0003');
    assert.equal(endpointCodeFor('HEAD', '/auth/login'), 'EP0000');
    assert.equal(endpointCodeFor('', '/auth/login'), 'EP0001');
    assert.equal(endpointCodeFor(null, '/auth/login'), 'EP0001');
    assert.equal(endpointCodeFor('OPTIONS', '/bff/users/kyc'), 'EP0120');
  });
});

// The codes appended after the first publication (spec 7.1), each with the neighbours it could
// shadow or be shadowed by: the first matching row wins, so a new row must not take a path of an
// earlier row, and an earlier, broader row must not take the new path. [method, URL, code].
const APPENDED: readonly (readonly [string, string, EndpointCode])[] = [
  // Auth
  ['POST', '/auth/logout-auto', 'EP0012'],
  ['POST', '/auth/logout', 'EP0002'],
  ['POST', '/auth/register', 'EP0013'],
  ['POST', '/auth/register/simplified', 'EP0014'],
  ['POST', '/auth/register/simplified/extra', 'EP0000'],
  ['GET', '/auth/register', 'EP0000'],
  ['POST', '/bff/register-simplified', 'EP0005'],
  ['POST', '/bff/social/google', 'EP0015'],
  ['POST', '/bff/social/apple/registerSimplified', 'EP0016'],
  ['POST', '/bff/social', 'EP0000'],
  ['POST', '/bff/social/google/other', 'EP0000'],
  ['POST', '/api/auth/register', 'EP0703'],
  ['POST', '/api/auth/social/google', 'EP0706'],
  // User / account
  ['POST', '/bff/validate-confirmation?token=abc', 'EP0055'],
  ['POST', '/users/list-referrals', 'EP0056'],
  ['POST', '/bff/users/list-referrals', 'EP0052'],
  ['POST', '/users/update/7', 'EP0020'],
  // Payments
  ['GET', '/coupons/WELCOME10', 'EP0101'],
  ['GET', '/coupons', 'EP0000'],
  ['GET', '/coupons/a/b', 'EP0000'],
  // Games / casino
  ['GET', '/casino-game-votes?casinoGameId=12', 'EP0159'],
  ['POST', '/casino-game-votes', 'EP0000'],
  ['POST', '/casino-game-votes/store/', 'EP0155'],
  ['DELETE', '/casino-game-votes/destroy/12', 'EP0156'],
  ['GET', '/bff/games/statistics-dl?slug=sweet-bonanza', 'EP0160'],
  ['GET', '/bff/games/statistics-dl/sweet-bonanza', 'EP0152'],
  ['GET', '/bff/games/statistics-by-period-dl/sweet-bonanza', 'EP0151'],
  // Sports
  ['GET', '/core-sportbook/search?search=flamengo', 'EP0190'],
  ['GET', '/core-sportbook/launch', 'EP0191'],
  ['GET', '/core-sportbook/anonymous-launch', 'EP0192'],
  ['GET', '/core-sportbook/events/12?live=1', 'EP0195'],
  ['GET', '/core-sportbook/events', 'EP0195'],
  ['GET', '/core-sportbook/search/extra', 'EP0195'],
  ['HEAD', '/core-sportbook/events', 'EP0195'],
  ['POST', '/core-sportbook/search', 'EP0000'],
  ['POST', '/core-sportbook/events', 'EP0000'],
  ['GET', '/api/core-sportbook/events', 'EP0799'],
];

describe('spec 7.1, 7.2: appended codes, first match wins', () => {
  for (const [method, path, code] of APPENDED) {
    test(`${method} ${path} → ${code}`, () => {
      for (const prefix of ['', '/v1', '/v2', '/api/v2']) {
        const url = `https://bff.example.com${prefix}${path}`;
        assert.equal(endpointCodeFor(method, url), code, url);
        assert.equal(classifyError({ status: 502, data: { message: 'bad gateway' }, url, method }).ref, `${code}-EM0032`, url);
      }
    });
  }
});
