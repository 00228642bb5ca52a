/**
 * The doctor's judgement of one upstream answer, pure: what the proxy would do with it (docs/behaviour.md
 * "Upstream answers": codings, JSON, empty answers, sizes, redirects), whether a success has the shape
 * of `src/contracts` (missing fields, wrong types; extra fields noted), whether a session token is a
 * well-formed JWT, and how the error-reference classifier reads an error answer (spec 7.3: does a 401
 * carry a reason the EM table maps). `run.ts` makes the calls; this module never does I/O.
 *
 * @example
 * const findings = judgeAnswer(probe, { status: 200, headers: { 'content-type': 'text/html' }, body, overLimit: false }, 4194304);
 * verdictOf(findings.findings); // 'fail'
 *
 * @module
 */
import * as zlib from 'node:zlib';
import type { TSchema } from '@sinclair/typebox';
import { checkAnswerShape, contractFindingText, MAX_EXTRA_FINDINGS, MAX_SHAPE_FINDINGS } from '../contracts/conformance.js';
import { classifyError, getError, SESSION_FALLBACK_ERROR_CODE } from '../errors/index.js';
import { isWellFormedJwt } from '../session/token.js';
import type { Probe } from './probes.js';
import { scrubText } from './scrub.js';

/** How bad a finding is: `fail` breaks the proxy's use of the endpoint, `warn` the proxy absorbs, `note` informs. */
export type FindingLevel = 'fail' | 'warn' | 'note';

/** One thing the doctor found about an answer. Never holds a credential. */
export interface Finding {
  readonly level: FindingLevel;
  readonly text: string;
}

/** The verdict of a row: the worst of its findings, or `skip` when it was not probed. */
export type Verdict = 'pass' | 'warn' | 'fail' | 'skip';

/** An upstream answer as the doctor read it: raw bytes, at most the size limit. */
export interface RawAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  /** The body as received (still coded), at most the limit. */
  readonly body: Buffer;
  /** The answer declared or sent more than the limit (the rest was not read). */
  readonly overLimit: boolean;
}

/** What {@link judgeAnswer} found, and the JSON body when there was one (for the discoveries of later probes). */
export interface Judgement {
  readonly findings: Finding[];
  readonly json?: unknown;
  /** The error reference of an error answer (spec 7.1), e.g. `EP0003-EM0003`. */
  readonly ref?: string;
}

/** The codings the proxy decodes (docs/behaviour.md "Upstream answers"); zstd only where the runtime decodes it. */
export const DECODABLE_CODINGS: readonly string[] = ['gzip', 'x-gzip', 'deflate', 'br', ...('zstdDecompressSync' in zlib ? ['zstd'] : [])];

const fail = (text: string): Finding => ({ level: 'fail', text });
const warn = (text: string): Finding => ({ level: 'warn', text });
const note = (text: string): Finding => ({ level: 'note', text });

function header(answer: RawAnswer, name: string): string | undefined {
  const v = answer.headers[name];
  return Array.isArray(v) ? v.join(', ') : v;
}

/** The worst level of the findings: `fail` over `warn` over `pass`. */
export function verdictOf(findings: readonly Finding[]): Exclude<Verdict, 'skip'> {
  if (findings.some((f) => f.level === 'fail')) return 'fail';
  if (findings.some((f) => f.level === 'warn')) return 'warn';
  return 'pass';
}

/** `application/json`, `application/problem+json` and other `+json` media types. */
export function isJsonMediaType(contentType: string | undefined): boolean {
  const type = (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  return type === 'application/json' || (type.startsWith('application/') && type.endsWith('+json'));
}

/**
 * Decodes a coded body as the proxy would (docs/behaviour.md "Upstream answers", "Codings"): the codings of
 * `Content-Encoding`, last applied first, each bounded by `limit` decoded bytes.
 * @returns the decoded body and a finding per coding (a `warn`: the proxy asked for `identity`), or a
 *   `fail` finding: an unknown coding (502 `upstream_bad_response`), bytes that do not decode, or a body
 *   that inflates past `limit` (502 `upstream_response_too_large`).
 */
export function decodeBody(body: Buffer, contentEncoding: string | undefined, limit: number): { body?: Buffer; findings: Finding[] } {
  const codings = (contentEncoding ?? '')
    .split(',')
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c !== '' && c !== 'identity');
  const findings: Finding[] = [];
  let out = body;
  for (const coding of codings.reverse()) {
    if (!DECODABLE_CODINGS.includes(coding)) {
      return { findings: [fail(`Content-Encoding ${coding}: a coding the proxy cannot decode (502 upstream_bad_response)`)] };
    }
    findings.push(
      warn(`Content-Encoding ${coding} although the call asked for Accept-Encoding: identity; the proxy decodes it, at a cost`),
    );
    try {
      const options = { maxOutputLength: limit };
      if (coding === 'br') out = zlib.brotliDecompressSync(out, options);
      else if (coding === 'deflate') out = zlib.inflateSync(out, options);
      else if (coding === 'zstd')
        out = (zlib as unknown as { zstdDecompressSync(b: Buffer, o: object): Buffer }).zstdDecompressSync(out, options);
      else out = zlib.gunzipSync(out, options);
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (code === 'ERR_BUFFER_TOO_LARGE' || error instanceof RangeError) {
        return { findings: [...findings, fail(`the ${coding} body inflates past ${limit} bytes (502 upstream_response_too_large)`)] };
      }
      return { findings: [...findings, fail(`the body is not valid ${coding} data (502 upstream_bad_response)`)] };
    }
  }
  return { body: out, findings };
}

/**
 * The differences between a JSON body and its schema (spec part 2 shapes, `src/contracts`), judged by
 * the module the live checks of upstream answers share (`src/contracts/conformance.ts`), so that a
 * row here reads like a finding in production: one `fail` per `missing`, `type` or `enum` finding
 * (`user.id: missing`, `deposit: expected array, got string`), and one `note` naming the fields the
 * schema does not know (`extra`).
 */
export function shapeFindings(schema: TSchema, value: unknown): Finding[] {
  const all = checkAnswerShape(schema, value);
  const findings: Finding[] = all.filter((f) => f.kind !== 'extra').map((f) => fail(contractFindingText(f)));
  if (findings.length === MAX_SHAPE_FINDINGS) findings.push(fail('… (more shape errors not listed)'));
  const extras = all.filter((f) => f.kind === 'extra').map((f) => f.path);
  if (extras.length > 0) {
    findings.push(
      note(
        `fields the specification does not name (kept as they are): ${extras.join(', ')}${extras.length === MAX_EXTRA_FINDINGS ? ', …' : ''}`,
      ),
    );
  }
  return findings;
}

/** A finding about one field of an answer: `user.id: missing`, `deposit: expected array, got string`. */
const FIELD_FINDING = /^([A-Za-z0-9_$[\].-]+): /;

/**
 * One finding per field: when several findings name the same field (the shape check and a session
 * check both find `user.id` missing), the worst is kept, and of equally bad ones the longest (the one
 * that says why the proxy needs it), at the place of the first. Findings that name no field are kept
 * once each.
 */
export function dedupeFindings(findings: readonly Finding[]): Finding[] {
  const rank: Readonly<Record<FindingLevel, number>> = { fail: 2, warn: 1, note: 0 };
  const kept = new Map<string, Finding>();
  for (const f of findings) {
    const key = FIELD_FINDING.exec(f.text)?.[1] ?? f.text;
    const held = kept.get(key);
    if (held === undefined) kept.set(key, f);
    else if (rank[f.level] > rank[held.level] || (rank[f.level] === rank[held.level] && f.text.length > held.text.length)) kept.set(key, f);
  }
  return [...kept.values()];
}

/** Whether a body that is not JSON is an HTML page (by its media type, or its first characters). */
function isHtml(contentType: string | undefined, text: string): boolean {
  const type = (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  return type === 'text/html' || type === 'application/xhtml+xml' || /^\s*<(!doctype html|html[\s>])/i.test(text);
}

/** Checks a session token of a login or refresh answer: a well-formed JWT a cookie can carry. Never quotes the token. */
export function tokenFindings(token: unknown): Finding[] {
  if (typeof token !== 'string' || token === '') return [fail('access_token: missing, so no session (502 upstream_bad_response)')];
  if (!isWellFormedJwt(token)) {
    return [
      fail(
        `access_token is not a well-formed JWT (an opaque token of ${token.length} characters?): the proxy answers 502 upstream_bad_response and sets no cookie`,
      ),
    ];
  }
  return [];
}

/**
 * Judges one answer of a probe (see the module comment).
 * @param probe - the row probed
 * @param answer - the answer as read, at most `limit` bytes
 * @param limit - `UPSTREAM_MAX_RESPONSE_BYTES`, in bytes
 * @param url - the URL called, for the classifier's EP code
 * @param secrets - taken out of a quoted reason before it is cut to 80 characters (the password of a
 *   run, which a BFF may echo), as JWT-like values always are ({@link scrubText})
 */
export function judgeAnswer(
  probe: Probe,
  answer: RawAnswer,
  limit: number,
  url: string,
  secrets: readonly (string | undefined)[] = [],
): Judgement {
  const findings: Finding[] = [];
  const { status } = answer;
  if (status >= 300 && status < 400) {
    return { findings: [fail(`a redirect (${status}): the proxy never follows one and answers 502 upstream_redirect`)] };
  }
  if (answer.overLimit) {
    return { findings: [fail(`the answer is over ${limit} bytes: the proxy answers 502 upstream_response_too_large`)] };
  }
  const decoded = decodeBody(answer.body, header(answer, 'content-encoding'), limit);
  findings.push(...decoded.findings);
  if (decoded.body === undefined) return { findings };
  const body = decoded.body;
  const contentType = header(answer, 'content-type');
  const text = body.toString('utf8').replace(/^\uFEFF/, '');
  let json: unknown;
  let parsed = false;
  if (text.trim() !== '') {
    try {
      json = JSON.parse(text);
      parsed = true;
    } catch {
      parsed = false;
    }
  }

  if (status >= 200 && status < 300) {
    const mediaType = (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
    if (probe.media?.includes(mediaType)) return { findings };
    if (text.trim() === '') {
      findings.push(
        probe.needsBody
          ? fail('an empty answer where the proxy needs the body: 502 upstream_bad_response')
          : note('an empty answer: the proxy answers { "ok": true } with this status'),
      );
      return { findings };
    }
    if (!parsed) {
      const what = isHtml(contentType, text) ? `an HTML page (${body.length} bytes)` : 'not JSON';
      findings.push(fail(`the body is ${what} (Content-Type ${contentType ?? 'none'}): the proxy answers 502 upstream_bad_response`));
      return { findings };
    }
    if (!isJsonMediaType(contentType)) {
      findings.push(warn(`Content-Type ${contentType ?? 'none'} on a JSON body; the proxy serves it as application/json`));
    }
    if (probe.answer) findings.push(...shapeFindings(probe.answer, json));
    return { findings, json };
  }

  // An error answer: what the browser SDK's classifier makes of it (spec 7.1-7.3).
  const { ref, errorCode, reason } = classifyError({ status, data: parsed ? json : undefined, rawBody: text, url, method: probe.method });
  const meaning = getError(errorCode)?.meaning ?? '';
  // An HTML error page is described, never quoted (its text is no reason, and may echo the request).
  const said =
    !parsed && text.trim() !== '' && isHtml(contentType, text)
      ? `an HTML page (${body.length} bytes)`
      : reason === null
        ? 'no reason'
        : `reason "${scrubText(reason, secrets).slice(0, 80)}"`;
  if (status === 401 && errorCode === SESSION_FALLBACK_ERROR_CODE) {
    findings.push(
      fail(`401 with ${said}, which no 401 row of the EM table maps (${ref}): the front end can only show a generic session error`),
    );
  } else if (status === 401 || status === 403) {
    findings.push((probe.alsoAccept?.includes(status) ? note : fail)(`${status} with ${said} (${ref}: ${meaning})`));
  } else if (status === 404 && !probe.required) {
    findings.push(note(`404 (${ref}): this BFF does not offer it; no proxy route calls it`));
  } else if (status >= 500) {
    findings.push(fail(`a server error ${status} with ${said} (${ref})`));
  } else if (probe.alsoAccept?.includes(status)) {
    findings.push(note(`${status} with ${said} (${ref}), a proper answer to this probe`));
  } else {
    findings.push(fail(`${status} with ${said} (${ref}: ${meaning}); the probe expects a success`));
  }
  if (!parsed && text.trim() !== '' && (status === 401 || status === 403)) {
    findings.push(warn(`the ${status} body is not JSON (Content-Type ${contentType ?? 'none'}); the proxy passes it on byte for byte`));
  }
  return { findings, ref, ...(parsed ? { json } : {}) };
}
