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
