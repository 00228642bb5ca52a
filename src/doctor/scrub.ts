/**
 * What the doctor prints or writes never holds a credential: every text of it (the table on standard
 * output, the lines on standard error, the `--json` report) goes through {@link scrubText}, which
 * takes out the password of the run (as given, and as it reads inside a JSON string or a URL, the
 * forms in which a BFF that echoes the login body shows it) and every JWT-like value (a session
 * token a BFF echoes in an error reason). Pure.
 *
 * @example
 * scrubText('invalid body {"password":"Demo#2026"}', ['Demo#2026']) // 'invalid body {"password":"[redacted]"}'
 *
 * @module
 */

/** What a secret is replaced with. */
export const REDACTED = '[redacted]';

/** What a JWT-like value is replaced with. */
export const REDACTED_JWT = '[redacted JWT]';

/**
 * A JWT-like value: a base64url JSON object (`eyJ`…) followed by one or two more dot-separated
 * base64url parts (a JWS, or its header and payload alone).
 */
const JWT_LIKE = /eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]*)?/g;

/** The forms in which `secret` can appear in a text: as given, escaped inside a JSON string, percent-encoded. */
function formsOf(secret: string): string[] {
  const forms = new Set([secret, JSON.stringify(secret).slice(1, -1), encodeURIComponent(secret)]);
  // Longest first: a form that contains another is replaced whole.
  return [...forms].filter((f) => f !== '').sort((a, b) => b.length - a.length);
}

/**
 * `text` without the `secrets` (each form of {@link formsOf}, replaced with {@link REDACTED}) and
 * without any JWT-like value (replaced with {@link REDACTED_JWT}). An empty secret is ignored.
 */
export function scrubText(text: string, secrets: readonly (string | undefined)[]): string {
  let out = text;
  for (const secret of secrets) {
    if (secret === undefined || secret === '') continue;
    for (const form of formsOf(secret)) out = out.replaceAll(form, REDACTED);
  }
  return out.replace(JWT_LIKE, REDACTED_JWT);
}
