/**
 * The doctor's opt-in check of the BFF's own idempotency (`--check-idempotency`; docs/doctor.md
 * "Does the BFF honour Idempotency-Key?"): the deposit of the probe table (EP0091, 1000 cents) sent
 * twice, one after the other, with one fresh `Idempotency-Key`, straight to the BFF with the doctor's
 * own session. It makes real deposits (one when the BFF honours the key, two when it does not), so
 * it is never part of a default run and needs a staging account's credentials.
 *
 * The verdict ({@link judgeIdempotency}, pure):
 *
 * | first answer | second answer | verdict |
 * |---|---|---|
 * | 2xx | the same body, or the same transaction id | `honoured`: one charge, a replay |
 * | 2xx | 409, 422 or 425 (the repeat refused) | `honoured`: one charge, the repeat refused |
 * | 2xx | 2xx with another transaction id | `not-honoured`: two charges |
 * | 2xx | 2xx, other body, no transaction id in either | `inconclusive`: look at the account |
 * | not 2xx, or none | any | `inconclusive`: nothing was charged to compare |
 * | 2xx | 5xx, another status, or none | `inconclusive` |
 *
 * Why it matters (docs/operations.md "Redis topologies"): a BFF that honours the key turns any
 * marker Redis forgets (a failover, a lost answer) into a replay instead of a second charge; the
 * proxy forwards the same key on every attempt of a submission for that reason.
 *
 * @module
 */
import { randomUUID } from 'node:crypto';

/** What the check concluded. */
export type IdempotencyVerdict = 'honoured' | 'not-honoured' | 'inconclusive';

/** One of the two deposits as the BFF answered it. */
export interface DepositAnswer {
  /** The HTTP status; `null` when there was no answer (time limit, connection failure). */
  readonly status: number | null;
  /** The body as received (empty when none). */
  readonly body: string;
  /** `transaction_id` (or `id`) of a JSON body, when it has one. */
  readonly transactionId?: string;
  /** Why there was no answer, when there was none. */
  readonly error?: string;
}

/** The outcome of the check, as the report holds it. */
export interface IdempotencyCheck {
  readonly verdict: IdempotencyVerdict;
  /** The `Idempotency-Key` both deposits carried (`doctor-<uuid>`). */
  readonly key: string;
  readonly first: Omit<DepositAnswer, 'body'>;
  readonly second: Omit<DepositAnswer, 'body'>;
  /** What the verdict means for the proxy in front of this BFF. */
  readonly meaning: string;
}

/** Statuses of a second deposit that refuse the repeat (a conflict, a key in use, too early). */
const REFUSED_REPEAT = new Set([409, 422, 425]);

const MEANINGS: Readonly<Record<IdempotencyVerdict, string>> = {
  honoured:
    "the BFF honours Idempotency-Key: a repeat of a submission is one charge whatever the proxy's Redis does (a failover that forgets a marker costs a replay, not a second charge)",
  'not-honoured':
    'the BFF charged the same Idempotency-Key twice: exactly once rests on the proxy\'s Redis alone (docs/operations.md "Redis topologies": every promotable replica acknowledging); ask the BFF team to keep the key and replay its answer',
  inconclusive: 'the two answers do not tell; look at the staging account for one or two deposits of 1000 cents',
};

/** `transaction_id`, else `id`, of a JSON object body (top level or under `data`). */
export function transactionIdOf(body: string): string | undefined {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return undefined;
  }
  for (const candidate of [json, (json as { data?: unknown } | null)?.data]) {
    if (candidate === null || typeof candidate !== 'object' || Array.isArray(candidate)) continue;
    for (const field of ['transaction_id', 'transactionId', 'id']) {
      const value = (candidate as Record<string, unknown>)[field];
      if ((typeof value === 'string' && value !== '') || typeof value === 'number') return String(value);
    }
  }
  return undefined;
}

const is2xx = (status: number | null): boolean => status !== null && status >= 200 && status < 300;

/** The verdict of two answers to one deposit sent twice with one key (the module's table). */
export function judgeIdempotency(first: DepositAnswer, second: DepositAnswer): { verdict: IdempotencyVerdict; why: string } {
  if (!is2xx(first.status)) {
    return {
      verdict: 'inconclusive',
      why: `the first deposit was not taken (${first.status ?? first.error ?? 'no answer'}): nothing was charged to compare; use an account that may deposit 1000 cents`,
    };
  }
  if (second.status !== null && REFUSED_REPEAT.has(second.status))
    return { verdict: 'honoured', why: `the repeat was refused (${second.status}): one charge` };
  if (!is2xx(second.status)) return { verdict: 'inconclusive', why: `the repeat answered ${second.status ?? second.error ?? 'nothing'}` };
  if (second.body === first.body) return { verdict: 'honoured', why: 'the repeat answered the same body: a replay, one charge' };
  if (first.transactionId !== undefined && second.transactionId !== undefined) {
    return first.transactionId === second.transactionId
      ? { verdict: 'honoured', why: `both answers name transaction ${first.transactionId}: one charge` }
      : { verdict: 'not-honoured', why: `two transactions for one key: ${first.transactionId} and ${second.transactionId}` };
  }
  return { verdict: 'inconclusive', why: 'the answers differ and name no transaction id' };
}

/**
 * Sends the deposit twice with one fresh key and judges the answers.
 * @param send - makes one call (the doctor's session, headers and limits), resolving to the answer; `headers` are added to the doctor's own.
 */
export async function checkIdempotency(send: (headers: Record<string, string>) => Promise<DepositAnswer>): Promise<IdempotencyCheck> {
  const key = `doctor-${randomUUID()}`;
  const first = await send({ 'idempotency-key': key });
  const second = await send({ 'idempotency-key': key });
  const { verdict, why } = judgeIdempotency(first, second);
  const view = ({ body: _body, ...rest }: DepositAnswer) => rest;
  return { verdict, key, first: view(first), second: view(second), meaning: `${why}; ${MEANINGS[verdict]}` };
}
