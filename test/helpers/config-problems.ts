/** The configuration's refusals, for the configuration tests. */
import assert from 'node:assert/strict';
import { ConfigError, loadConfig } from '../../src/config.js';

/** The problems `loadConfig(env)` throws, or fails the test when it throws nothing. */
export function problemsOf(env: Record<string, string>): readonly string[] {
  try {
    loadConfig(env);
  } catch (error) {
    assert.ok(error instanceof ConfigError, `a ConfigError, got ${String(error)}`);
    return error.problems;
  }
  assert.fail(`expected a ConfigError for ${JSON.stringify(env)}`);
}
