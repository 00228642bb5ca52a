/**
 * Removal of the session JWT from streamed response bodies (CONTRACT.md "Session cookie": the JWT
 * never appears in a response body), for answers the proxy passes on without buffering them
 * (receipts, the dev forwarder): every occurrence is replaced by `[redacted]`, also when it is split
 * across chunks. The buffered answers are redacted by the app's `send`.
 *
 * @module
 */
import { pipeline, type Readable, Transform } from 'node:stream';
import type { FastifyReply } from 'fastify';

/** Shortest session cookie value redacted from responses (shorter values are no JWT, and common text). */
export const MIN_REDACTED_TOKEN_LENGTH = 16;

/** `text` with every occurrence of `token` replaced by `[redacted]` (a header value, a buffered body). */
export function redactText(text: string, token: string | undefined): string {
  return token && token.length >= MIN_REDACTED_TOKEN_LENGTH && text.includes(token) ? text.replaceAll(token, '[redacted]') : text;
}

function ignore(): void {}

/**
 * Sends a streamed upstream answer (a receipt) with the session token redacted from every reply header
 * and from the body as it flows (CONTRACT.md "Session cookie"). The redacted body may be shorter or
 * longer, so a `Content-Length` is dropped. Without a token (or one too short to be a credential) the
 * stream is sent as it is.
 */
export function sendRedactedStream(reply: FastifyReply, body: Readable, token: string | undefined): FastifyReply {
  if (!token || token.length < MIN_REDACTED_TOKEN_LENGTH) return reply.send(body);
  const headers = reply.getHeaders();
  for (const name in headers) {
    const value = headers[name];
    if (name === 'set-cookie' || value === undefined) continue;
    const text = Array.isArray(value) ? value.join(', ') : String(value);
    if (text.includes(token)) reply.header(name, redactText(text, token));
  }
  reply.removeHeader('content-length');
  return reply.send(pipeline(body, redactingStream(token), ignore));
}

const MARK = Buffer.from('[redacted]');

function replaceAll(data: Buffer, needle: Buffer): Buffer {
  let at = data.indexOf(needle);
  if (at < 0) return data;
  const parts: Buffer[] = [];
  let from = 0;
  while (at >= 0) {
    parts.push(data.subarray(from, at), MARK);
    from = at + needle.length;
    at = data.indexOf(needle, from);
  }
  parts.push(data.subarray(from));
  return Buffer.concat(parts);
}

/** Where the longest end of `data` that begins `needle` starts (`data.length` when none does). */
function partialStart(data: Buffer, needle: Buffer): number {
  for (let i = Math.max(0, data.length - needle.length + 1); i < data.length; i++) {
    if (data[i] === needle[0] && data.subarray(i).equals(needle.subarray(0, data.length - i))) return i;
  }
  return data.length;
}

/**
 * A transform that passes bytes through with every occurrence of `token` replaced by `[redacted]`.
 * Between chunks it holds back only an end that could begin the token (a token may straddle two
 * chunks); everything else flows at once.
 *
 * @example pipeline(upstreamBody, redactingStream(jwt), () => {})
 */
export function redactingStream(token: string): Transform {
  const needle = Buffer.from(token);
  let tail: Buffer = Buffer.alloc(0);
  return new Transform({
    transform(chunk: Buffer | string, _encoding, callback) {
      const data = replaceAll(Buffer.concat([tail, Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk)]), needle);
      const cut = partialStart(data, needle);
      tail = data.subarray(cut);
      callback(null, data.subarray(0, cut));
    },
    flush(callback) {
      callback(null, tail);
    },
  });
}

/**
 * A JWT-shaped run: three base64url parts (dots possibly percent-encoded), the first two of 8+
 * characters. Whether it is a token is decided by {@link looksLikeJwtHeader}. A match starts only
 * where a run of base64url characters starts (the lookbehind), which keeps the scan linear.
 */
const JWT_SHAPED = /(?<![A-Za-z0-9_-])[A-Za-z0-9_-]{8,}(?:\.|%2[Ee])[A-Za-z0-9_-]{8,}(?:\.|%2[Ee])[A-Za-z0-9_-]*/g;
/** A credential parameter (`access_token=…`, also `refresh_token` and `id_token`, `=` possibly percent-encoded) up to its end. */
const TOKEN_PARAMETER = /((?:access|refresh|id)_token(?:=|%3[Dd]))[^&#\s"'\\]+/gi;
/** An `Authorization`-style credential written in a text. */
const BEARER = /\b(Bearer\s+)[A-Za-z0-9._~+/%-]{8,}=*/g;

/**
 * Whether a base64url run holds, from one of its `e`s, the start of a JSON object header (`{"` or
 * `{ "`, which base64url writes `eyJ`, `eyAi`…): a JWT glued to the letters before it is found too.
 */
function looksLikeJwtHeader(run: string): boolean {
  for (let at = run.indexOf('e'); at !== -1 && at + 4 <= run.length; at = run.indexOf('e', at + 1)) {
    const head = Buffer.from(run.slice(at, at + 8), 'base64url').toString('latin1');
    if (/^\{\s*"/.test(head)) return true;
  }
  return false;
}

/**
 * `text` with every token-like value replaced by `[redacted]` (CONTRACT.md "Session cookie": the JWT
 * never appears in a log line): JWT-shaped values (three base64url parts whose header is a JSON
 * object, also glued to other text or with `%2E` dots), `access_token=` / `refresh_token=` /
 * `id_token=` parameters (query or fragment) and `Bearer` credentials. Text without any is returned
 * as it is. Used on every log line (`pipeline/logging.ts`), whatever field holds the value.
 *
 * @example scrubSecrets('/cb#access_token=abc.def&x=1') // '/cb#access_token=[redacted]&x=1'
 */
export function scrubSecrets(text: string): string {
  let out = text;
  if (out.includes('.') || out.includes('%2')) {
    out = out.replace(JWT_SHAPED, (run) => (looksLikeJwtHeader(run.split(/\.|%2[Ee]/)[0] ?? '') ? '[redacted]' : run));
  }
  if (/_token/i.test(out)) out = out.replace(TOKEN_PARAMETER, '$1[redacted]');
  if (out.includes('Bearer')) out = out.replace(BEARER, '$1[redacted]');
  return out;
}

/**
 * A JSON text that holds `token` written with `\u` escapes (`"\u0065\u0079\u004a…"`, which a
 * browser's `JSON.parse` turns back into the token), re-serialised without escapes and with the token
 * replaced by `[redacted]`; `undefined` when the text has no `\u` escape, is not JSON, or does not
 * hold the token once decoded. Only called for a body that does not hold the token as it is (the
 * plain case is a cheaper `replaceAll`).
 *
 * @example redactEscapedJson('{"t":"\\u0061bc…"}', 'abc…') // '{"t":"[redacted]"}'
 */
export function redactEscapedJson(text: string, token: string): string | undefined {
  if (!text.includes('\\u')) return undefined;
  let plain: string;
  try {
    plain = JSON.stringify(JSON.parse(text));
  } catch {
    return undefined;
  }
  return plain.includes(token) ? plain.replaceAll(token, '[redacted]') : undefined;
}
