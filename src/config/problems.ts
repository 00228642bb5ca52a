/**
 * How a configuration problem is reported (docs/behaviour.md "Configuration"): one line per problem,
 * naming its variable, all of them at once.
 *
 * @module
 */

/** Thrown by {@link loadConfig} with every problem found, one per line, each naming its variable. */
export class ConfigError extends Error {
  readonly problems: readonly string[];
  constructor(problems: string[]) {
    super(`invalid configuration: ${problems.join('; ')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

/** A value as an error line quotes it: JSON-escaped (so the line stays one line), at most 80 characters. */
export function quoted(text: string): string {
  return JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}…` : text);
}
