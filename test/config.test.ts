/**
 * CONTRACT.md "Configuration": every variable validated at start, every problem reported at once
 * naming its variable, defaults as the table says, and the result frozen.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { ConfigError, loadConfig, PACKAGE_VERSION } from '../src/config.js';

describe('CONTRACT.md configuration', () => {
  test('defaults of the table', () => {
    const c = loadConfig({});
    assert.equal(c.port, 3000);
    assert.equal(c.host, '127.0.0.1');
    assert.equal(c.nodeEnv, 'development');
    assert.equal(c.useSandbox, true);
    assert.equal(c.upstreamTimeoutMs, 15000);
    assert.equal(c.registerType, 'bff-simplified');
    assert.equal(c.sessionCookieName, 'access_token');
    assert.equal(c.allowedOrigins, undefined);
    assert.equal(c.buildId, PACKAGE_VERSION);
    assert.equal(c.logLevel, 'info');
    assert.equal(c.cachePurgeToken, undefined);
    assert.equal(c.workers, 1);
    assert.equal(c.catalogueCacheTtlMs, 60000);
    assert.ok(Object.isFrozen(c));
    assert.ok(Object.isFrozen(c.upstreams));
  });

  test('production: __Host- cookie name by default', () => {
    const c = loadConfig({ NODE_ENV: 'production' });
    assert.equal(c.production, true);
    assert.equal(c.sessionCookieName, '__Host-access_token');
  });

  test('values are converted and URLs normalised', () => {
    const c = loadConfig({
      PORT: '0',
      BFF_BASE_URL: 'https://bff.example.com/api/',
      UPSTREAM_TIMEOUT_MS: '2500',
      REGISTER_TYPE: 'classic',
      ALLOWED_ORIGINS: 'https://www.example.com, https://m.example.com',
      SESSION_COOKIE_NAME: 'sid',
    });
    assert.equal(c.port, 0);
    assert.equal(c.upstreams.BFF_BASE_URL, 'https://bff.example.com/api');
    assert.equal(c.useSandbox, false);
    assert.equal(c.upstreamTimeoutMs, 2500);
    assert.equal(c.registerType, 'classic');
    assert.deepEqual(c.allowedOrigins, ['https://www.example.com', 'https://m.example.com']);
    assert.equal(c.sessionCookieName, 'sid');
  });

  test('every problem is reported at once, each naming its variable', () => {
    try {
      loadConfig({
        PORT: 'eighty',
        NODE_ENV: 'staging',
        UPSTREAM_TIMEOUT_MS: '-1',
        REGISTER_TYPE: 'fancy',
        LOG_LEVEL: 'loud',
      });
      assert.fail('expected a ConfigError');
    } catch (error) {
      assert.ok(error instanceof ConfigError);
      for (const name of ['PORT', 'NODE_ENV', 'UPSTREAM_TIMEOUT_MS', 'REGISTER_TYPE', 'LOG_LEVEL']) {
        assert.ok(error.problems.some((p) => p.startsWith(`${name}:`)), `${name} is named`);
      }
      assert.ok(!error.message.includes('\n'), 'one line');
    }
    try {
      loadConfig({ BFF_BASE_URL: 'ftp://x', STICKER_API_URL: 'not a url', ALLOWED_ORIGINS: 'https://a.com/path' });
      assert.fail('expected a ConfigError');
    } catch (error) {
      assert.ok(error instanceof ConfigError);
      assert.deepEqual(
        error.problems.map((p) => p.split(':')[0]),
        ['BFF_BASE_URL', 'STICKER_API_URL', 'ALLOWED_ORIGINS'],
      );
    }
  });

  test('PACKAGE_VERSION follows package.json (the default BUILD_ID)', () => {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
    assert.equal(PACKAGE_VERSION, pkg.version);
  });
});
