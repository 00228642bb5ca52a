/**
 * Marketing attribution read from the browser's tracking cookies (spec 2.4, 2.7): the `utm_*` values of
 * the `cookie_tracking` cookie (last-touch policy) and the analytics client id of the `_ga` cookie.
 * Values sent in the body win; these fill what is absent (docs/behaviour.md "Clarifications of the specification", "Deposit attribution").
 *
 * @module
 */

/** The attribution keys carried by `cookie_tracking`, in their wire (snake_case) names. */
export const UTM_KEYS = ['utm_source', 'utm_campaign', 'utm_content', 'utm_medium'] as const;
export type UtmKey = (typeof UTM_KEYS)[number];

const MAX_VALUE = 256;

function pickUtm(source: unknown): Partial<Record<UtmKey, string>> {
  const out: Partial<Record<UtmKey, string>> = {};
  if (!source || typeof source !== 'object' || Array.isArray(source)) return out;
  const record = source as Record<string, unknown>;
  for (const key of UTM_KEYS) {
    const value = record[key];
    if (typeof value === 'string' && value.length > 0 && value.length <= MAX_VALUE) out[key] = value;
  }
  return out;
}

/**
 * Reads the `cookie_tracking` cookie: a JSON object of `utm_*` values, a JSON array of such touches
 * (the last one is used: last-touch policy), or a query string `utm_source=…&utm_medium=…`.
 * Anything unreadable gives no values.
 */
export function trackingFromCookie(value: string | undefined): Partial<Record<UtmKey, string>> {
  if (!value || value.length > 4096) return {};
  let text = value;
  try {
    text = decodeURIComponent(value);
  } catch {
    // use it as it came
  }
  const trimmed = text.trim();
  if (trimmed.startsWith('{') || trimmed.startsWith('[')) {
    try {
      const parsed: unknown = JSON.parse(trimmed);
      return pickUtm(Array.isArray(parsed) ? parsed[parsed.length - 1] : parsed);
    } catch {
      return {};
    }
  }
  return pickUtm(Object.fromEntries(new URLSearchParams(trimmed)));
}

/**
 * The analytics client id of a `_ga` cookie (`GA1.1.1234567890.1700000000` → `1234567890.1700000000`),
 * or `undefined` when the cookie is absent or not of that form.
 */
export function gaClientIdFromCookie(value: string | undefined): string | undefined {
  if (!value) return undefined;
  const match = /^GA\d+\.\d+\.(\d{1,20}\.\d{1,20})$/.exec(value.trim());
  return match?.[1];
}
