/**
 * Small helpers for sandbox handlers: BFF-style error bodies and body field checks.
 *
 * Error bodies look like the BFF's: `{ message, reason }`, plus `errors` (field → messages) on
 * 422 validation failures.
 *
 * @module
 */
import type { FastifyReply } from 'fastify';

/** Field name → messages. */
export type FieldErrors = Record<string, string[]>;

/**
 * Sends `{ message, reason, ...extra }` with `status`.
 *
 * @example return sendError(reply, 401, 'invalid_credentials', 'Invalid credentials');
 */
export function sendError(
  reply: FastifyReply,
  status: number,
  reason: string,
  message: string,
  extra: Record<string, unknown> = {},
): FastifyReply {
  return reply.code(status).send({ message, reason, ...extra });
}

/** Sends 422 `{ message, reason: 'validation_error', errors }`; `message` is the first error. */
export function sendValidationError(reply: FastifyReply, errors: FieldErrors): FastifyReply {
  const first = Object.values(errors)[0]?.[0] ?? 'The given data was invalid.';
  return sendError(reply, 422, 'validation_error', first, { errors });
}

/** The body as a record; `{}` for anything that is not a JSON object. */
export function asRecord(body: unknown): Record<string, unknown> {
  return typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
}

type FieldKind = 'string' | 'number' | 'boolean';
/** A field rule: its JSON type, optional when suffixed with `?`. Required strings must not be blank. */
export type FieldRule = FieldKind | `${FieldKind}?`;
interface KindTypes {
  string: string;
  number: number;
  boolean: boolean;
}
type RuleType<R extends FieldRule> = R extends `${infer K extends FieldKind}?`
  ? KindTypes[K] | undefined
  : R extends FieldKind
    ? KindTypes[R]
    : never;

/** The typed result of {@link checkFields}. */
export type CheckedFields<S extends Record<string, FieldRule>> = { [K in keyof S]: RuleType<S[K]> };

/**
 * Checks the JSON types of body fields; `null` counts as absent.
 *
 * @example
 * const checked = checkFields(request.body, { login: 'string', two_factor_code: 'number?' });
 * if (!checked.ok) return sendValidationError(reply, checked.errors);
 * checked.value.login; // string
 */
export function checkFields<S extends Record<string, FieldRule>>(
  body: unknown,
  rules: S,
): { ok: true; value: CheckedFields<S> } | { ok: false; errors: FieldErrors } {
  const record = asRecord(body);
  const errors: FieldErrors = {};
  const value: Record<string, unknown> = {};
  for (const [name, rule] of Object.entries(rules)) {
    const optional = rule.endsWith('?');
    const kind = (optional ? rule.slice(0, -1) : rule) as FieldKind;
    const raw = record[name];
    if (raw === undefined || raw === null || (kind === 'string' && !optional && typeof raw === 'string' && raw.trim() === '')) {
      if (!optional) errors[name] = [`The ${name} field is required.`];
      continue;
    }
    if (typeof raw !== kind || (kind === 'number' && !Number.isFinite(raw))) {
      errors[name] = [`The ${name} field must be a ${kind}.`];
      continue;
    }
    value[name] = raw;
  }
  if (Object.keys(errors).length > 0) return { ok: false, errors };
  return { ok: true, value: value as CheckedFields<S> };
}
