/**
 * Removal of the session cookie's values from answers (docs/behaviour.md "Session cookie": neither the
 * JWT nor any value the browser sent as the session cookie — accepted, refused, expired, forged or
 * malformed — ever appears in a response body or header). Every occurrence is replaced by
 * `[redacted]`: in buffered bodies and header values ({@link redactText}, {@link redactBody}, used by
 * the routes' `sendAnswer`), and in streamed bodies as they flow, also when a value is split across
 * chunks ({@link sendRedactedStream}: receipts, the raw passthrough).
 *
 * @module
 */
import { pipeline, type Readable, Transform } from 'node:stream';
import type { FastifyReply } from 'fastify';

/** Shortest session cookie value redacted from responses (shorter values are no JWT, and common text). */
export const MIN_REDACTED_TOKEN_LENGTH = 16;

/**
 * The values to redact: one value or several (the session cookie as the browser sent it, each of its
 * spellings); `undefined` or an empty list when there is none. Values shorter than
 * {@link MIN_REDACTED_TOKEN_LENGTH} are never redacted (they would mangle ordinary text).
 */
export type Secrets = string | readonly string[] | undefined;

/** The values of `secrets` long enough to be redacted, longest first (a value inside another is found after it). */
export function redactionValues(secrets: Secrets): readonly string[] {
  if (secrets === undefined) return [];
  if (typeof secrets === 'string') return secrets.length >= MIN_REDACTED_TOKEN_LENGTH ? [secrets] : [];
  if (secrets.length === 1) return (secrets[0] as string).length >= MIN_REDACTED_TOKEN_LENGTH ? secrets : [];
  return secrets.filter((value) => value.length >= MIN_REDACTED_TOKEN_LENGTH).sort((a, b) => b.length - a.length);
}

/** Largest number of values of the session cookie one request may make the proxy redact (the cookie repeated). */
const MAX_SENT_VALUES = 8;

/**
 * A cookie name as a BFF framework reads it (docs/behaviour.md "Upstream requests"): `+` as a space,
 * percent-decoded, `.`, spaces and `[` as `_` (PHP's reading of request variable names), in lower case
 * (frameworks that compare names without case). Two names of one form name one cookie for some BFF.
 *
 * @example cookieNameForm('__Host-access%5Ftoken') // '__host-access_token'
 * @example cookieNameForm('__Host-access.token') // '__host-access_token'
 */
export function cookieNameForm(name: string): string {
  let text = name.trim();
  if (text.includes('+')) text = text.replaceAll('+', ' ');
  if (text.includes('%')) {
    try {
      text = decodeURIComponent(text);
    } catch {
      // Not percent-encoding: a framework reads the name as it is.
    }
  }
  return text.replace(/[. []/g, '_').toLowerCase();
}

/**
 * Whether a `Cookie` header may hold a pair named, in some spelling, `name` (see {@link cookieNameForm}):
 * a cheap test that lets the common header (no such pair) pass without being split.
 */
function mayHoldSpelling(header: string, name: string): boolean {
  if (header.includes(name)) return true;
  if (header.includes('%') || header.includes('+') || header.includes('[')) return true;
  // `.` and other cases: compare the header's letters with the name's, ignoring case and `.`, `_` and spaces.
  const loose = (text: string) => text.toLowerCase().replace(/[._ ]/g, '');
  return loose(header).includes(loose(name));
}

/**
 * A `Cookie` header read for the session cookie `name` (docs/behaviour.md "Session cookie", "Upstream
 * requests"), in one pass over its pairs: what {@link sentCookieValues} and {@link withoutCookie} give.
 */
export interface SessionCookieSplit {
  /** Every value sent as the cookie, as {@link sentCookieValues} gives them. */
  readonly values: string[];
  /** The header without the cookie's pairs, as {@link withoutCookie} gives it. */
  readonly others: string;
}

/** The split of a header that holds no session cookie. */
const NOT_SENT: SessionCookieSplit = Object.freeze({ values: Object.freeze([]) as unknown as string[], others: '' });

/**
 * Splits a `Cookie` header into the values sent as the cookie `name`, under any spelling a BFF
 * framework reads as that name ({@link cookieNameForm}), and the header without those pairs, in one
 * pass over its pairs: a request needs both (its answer's redaction, its upstream `Cookie` header),
 * and splitting the header once for each was the same work twice. A header that cannot hold the
 * cookie is not split: no values, the header as it is.
 *
 * @returns `values` (see {@link sentCookieValues}) and `others` (see {@link withoutCookie}; `''` for an absent header).
 */
export function splitSessionCookie(header: string | undefined, name: string): SessionCookieSplit {
  if (!header) return NOT_SENT;
  if (!mayHoldSpelling(header, name)) return { values: [], others: header };
  const form = cookieNameForm(name);
  const values: string[] = [];
  const add = (value: string) => {
    if (value.length >= MIN_REDACTED_TOKEN_LENGTH && !values.includes(value) && values.length < MAX_SENT_VALUES) values.push(value);
  };
  const kept: string[] = [];
  let dropped = false;
  for (const pair of header.split(';')) {
    const at = pair.indexOf('=');
    const pairName = (at < 0 ? pair : pair.slice(0, at)).trim();
    if (pairName !== name && cookieNameForm(pairName) !== form) {
      const text = pair.trim();
      if (text !== '') kept.push(text);
      continue;
    }
    dropped = true;
    const raw = at < 0 ? '' : pair.slice(at + 1).trim();
    add(raw);
    const unquoted = raw.length >= 2 && raw.startsWith('"') && raw.endsWith('"') ? raw.slice(1, -1) : raw;
    add(unquoted);
    if (unquoted.includes('%')) {
      try {
        add(decodeURIComponent(unquoted));
      } catch {
        // not percent-encoding: the value as sent is already in the list
      }
    }
  }
  return { values, others: dropped ? kept.join('; ') : header };
}

/**
 * Every value the browser sent as the cookie `name`, under any spelling a BFF framework reads as that
 * name ({@link cookieNameForm}: `access%5Ftoken`, `access.token`…), in a `Cookie` header, as it sent it
 * and as the cookie parser decodes it (percent-decoded, without surrounding quotes), at most
 * {@link MAX_SENT_VALUES} distinct values, each at least {@link MIN_REDACTED_TOKEN_LENGTH} characters
 * (shorter values are never redacted). A header that cannot hold the cookie gives `[]` without being split.
 *
 * @example sentCookieValues('a=1; access_token=eyJ…%3D; b=2', 'access_token') // ['eyJ…%3D', 'eyJ…=']
 */
export function sentCookieValues(header: string | undefined, name: string): string[] {
  return [...splitSessionCookie(header, name).values];
}

/**
 * A `Cookie` header without any pair whose name reads as `name` in some spelling ({@link cookieNameForm}:
 * the session cookie, which travels only as the Bearer of an accepted session: docs/behaviour.md
 * "Upstream requests"); the other pairs trimmed and in order; `''` when none is left. A header that
 * holds no such pair is returned as it is.
 *
 * @example withoutCookie('theme=dark; access_token=eyJ…; _ga=GA1', 'access_token') // 'theme=dark; _ga=GA1'
 * @example withoutCookie('a=1; access%5Ftoken=eyJ…', 'access_token') // 'a=1'
 */
export function withoutCookie(header: string, name: string): string {
  return splitSessionCookie(header, name).others;
}

/** `text` with every occurrence of each of `secrets` replaced by `[redacted]` (a header value, a buffered body). */
export function redactText(text: string, secrets: Secrets): string {
  let out = text;
  for (const value of redactionValues(secrets)) if (out.includes(value)) out = out.replaceAll(value, '[redacted]');
  return out;
}

/**
 * A buffered body with every occurrence of each of `secrets` replaced by `[redacted]`, also where a
 * JSON body writes a value with `\u` escapes (which the browser's `JSON.parse` decodes back); the body
 * itself (same object) when it holds none.
 */
export function redactBody(body: string | Buffer, secrets: Secrets): string | Buffer {
  const values = redactionValues(secrets);
  if (values.length === 0) return body;
  let out: string | Buffer = body;
  for (const value of values) {
    if (Buffer.isBuffer(out) ? out.includes(value) : out.includes(value)) out = out.toString().replaceAll(value, '[redacted]');
  }
  if (out.includes('\\u')) {
    for (const value of values) out = redactEscapedJson(out.toString(), value) ?? out;
  }
  return out;
}

function ignore(): void {}

/**
 * Sends a streamed upstream answer (a receipt, the raw passthrough) with each of `secrets` redacted
 * from every reply header and from the body as it flows (docs/behaviour.md "Session cookie"). The
 * redacted body may be shorter or longer, so a `Content-Length` is dropped. Without a value long
 * enough to be a credential the stream is sent as it is.
 *
 * @param options - `transcode`: the body is first written in UTF-8 ({@link utf8Stream}) from `encoding`
 *   ({@link foreignEncoding}; `undefined`: as a UTF-16 byte-order mark at its start says), so that a
 *   value written in another encoding is found too (the raw passthrough).
 */
export function sendRedactedStream(
  reply: FastifyReply,
  body: Readable,
  secrets: Secrets,
  options: { transcode?: boolean; encoding?: string | undefined } = {},
): FastifyReply {
  const values = redactionValues(secrets);
  if (values.length === 0) return reply.send(body);
  const headers = reply.getHeaders();
  for (const name in headers) {
    const value = headers[name];
    if (name === 'set-cookie' || value === undefined) continue;
    const text = Array.isArray(value) ? value.join(', ') : String(value);
    const redacted = redactText(text, values);
    if (redacted !== text) reply.header(name, redacted);
  }
  reply.removeHeader('content-length');
  if (options.transcode === true) return reply.send(pipeline(body, utf8Stream(options.encoding), redactingStream(values), ignore));
  return reply.send(pipeline(body, redactingStream(values), ignore));
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
 * A transform that passes bytes through with every occurrence of each of `secrets` replaced by
 * `[redacted]`. Between chunks it holds back only an end that could begin a value (a value may
 * straddle two chunks); everything else flows at once.
 *
 * @example pipeline(upstreamBody, redactingStream(jwt), () => {})
 */
export function redactingStream(secrets: string | readonly string[]): Transform {
  const found = redactionValues(secrets);
  const list = found.length > 0 ? found : typeof secrets === 'string' ? [secrets] : secrets;
  const buffers = list.map((value) => Buffer.from(value));
  let tail: Buffer = Buffer.alloc(0);
  return new Transform({
    transform(chunk: Buffer | string, _encoding, callback) {
      let data: Buffer = Buffer.concat([tail, Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk)]);
      for (const needle of buffers) data = replaceAll(data, needle);
      let cut = data.length;
      for (const needle of buffers) cut = Math.min(cut, partialStart(data, needle));
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
 * Where a JWT header can start in base64url: `{` is `e` and 2 bits of the next character, which the
 * next byte (`"`, or a white space `\s` matches in latin1: tab, LF, VT, FF, CR, space, NBSP) makes `y`,
 * `w` or `6`. A text without any holds no run {@link looksLikeJwtHeader} accepts, and is not scanned
 * for JWT-shaped runs at all: most log lines hold none, and the scan is a sizeable part of a cheap answer.
 */
const JWT_HEADER_START = /e[yw6]/;

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
 * `text` with every token-like value replaced by `[redacted]` (docs/behaviour.md "Session cookie": the JWT
 * never appears in a log line): JWT-shaped values (three base64url parts whose header is a JSON
 * object, also glued to other text or with `%2E` dots), `access_token=` / `refresh_token=` /
 * `id_token=` parameters (query or fragment) and `Bearer` credentials. Text without any is returned
 * as it is. Used on every log line (`pipeline/logging.ts`), whatever field holds the value.
 *
 * @example scrubSecrets('/cb#access_token=abc.def&x=1') // '/cb#access_token=[redacted]&x=1'
 */
export function scrubSecrets(text: string): string {
  let out = text;
  if ((out.includes('.') || out.includes('%2')) && JWT_HEADER_START.test(out)) {
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

/**
 * The standard base64 and base64url forms of each of `values`, as they stand inside any longer base64
 * text, whatever bytes come before and after (docs/behaviour.md "Session cookie": redaction by meaning,
 * not bytes). base64 writes 3 bytes as 4 characters, so a value starting at each of the 3 offsets
 * within a group is written differently; each form keeps the characters its bytes alone decide.
 *
 * @example encodedForms(['eyJhbGciOiJIUzI1NiJ9.e30.sig-of-the-token']) // [ 'ZXlKaGJHY2lPaUpJVXpJMU5pSjkuZTMwLnNpZy1vZi10aGUtdG9r', … ]
 */
export function encodedForms(values: readonly string[]): string[] {
  const forms: string[] = [];
  const add = (form: string) => {
    if (form.length >= MIN_REDACTED_TOKEN_LENGTH && !forms.includes(form)) forms.push(form);
  };
  for (const value of values) {
    const bytes = Buffer.from(value);
    for (let offset = 0; offset < 3; offset++) {
      const total = offset + bytes.length;
      const text = Buffer.concat([Buffer.alloc(offset), bytes]).toString('base64');
      // The first group mixes the bytes before the value (offset > 0), the last one the bytes after it.
      const form = text.slice(offset === 0 ? 0 : 4, 4 * Math.floor(total / 3));
      add(form);
      add(form.replaceAll('+', '-').replaceAll('/', '_'));
    }
  }
  return forms;
}

/** Canonical WHATWG encoding names that need no transcoding before a scan (the JWT's bytes stand in them as they are). */
const UTF8 = 'utf-8';

/**
 * The encoding a text answer must be transcoded from before it is scanned for the session's values
 * (docs/behaviour.md "Session cookie"): a UTF-16 byte-order mark at the start of `head` (which a browser
 * obeys before any header), else the `charset` of `contentType` when it names another encoding than
 * UTF-8. `undefined`: the bytes are scanned as they are. `null`: a charset no decoder here knows (the
 * answer is refused, since a browser might decode it).
 *
 * @param head - the answer's first bytes (at least 2 for the byte-order mark).
 * @returns a WHATWG encoding name for `TextDecoder`, `undefined` or `null`.
 */
export function foreignEncoding(contentType: string | undefined, head: Buffer | undefined): string | undefined | null {
  if (head !== undefined && head.length >= 2) {
    if (head[0] === 0xff && head[1] === 0xfe) return 'utf-16le';
    if (head[0] === 0xfe && head[1] === 0xff) return 'utf-16be';
  }
  const charset = contentType === undefined ? undefined : /;\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(contentType)?.[1];
  if (charset === undefined) return undefined;
  let encoding: string;
  try {
    encoding = new TextDecoder(charset).encoding;
  } catch {
    return null;
  }
  return encoding === UTF8 ? undefined : encoding;
}

/** `contentType` with its `charset` parameter set to `utf-8` (added when it had none). */
export function utf8ContentType(contentType: string): string {
  const without = contentType.replace(/;\s*charset\s*=\s*("[^"]*"|[^;]*)/gi, '');
  return `${without}; charset=utf-8`;
}

/** A whole body decoded from `encoding` ({@link foreignEncoding}) and written in UTF-8 (a byte-order mark dropped). */
export function transcodeToUtf8(body: Buffer, encoding: string): Buffer {
  return Buffer.from(new TextDecoder(encoding).decode(body), 'utf8');
}

/**
 * A transform that decodes a streamed body from `encoding` and writes it in UTF-8, character by
 * character as it flows (a character split across chunks is held until its end arrives). When
 * `encoding` is `undefined`, the first chunk decides: a UTF-16 byte-order mark switches the stream to
 * that encoding (written with a UTF-8 mark, which the browser obeys before the header), else the
 * bytes pass as they are.
 */
export function utf8Stream(encoding: string | undefined): Transform {
  let decoder: TextDecoder | undefined = encoding === undefined ? undefined : new TextDecoder(encoding);
  let decided = encoding !== undefined;
  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      if (!decided) {
        decided = true;
        const found = foreignEncoding(undefined, chunk);
        if (typeof found === 'string') {
          decoder = new TextDecoder(found);
          callback(null, Buffer.concat([UTF8_BOM, Buffer.from(decoder.decode(chunk, { stream: true }), 'utf8')]));
          return;
        }
      }
      callback(null, decoder === undefined ? chunk : Buffer.from(decoder.decode(chunk, { stream: true }), 'utf8'));
    },
    flush(callback) {
      callback(null, decoder === undefined ? Buffer.alloc(0) : Buffer.from(decoder.decode(), 'utf8'));
    },
  });
}

const UTF8_BOM = Buffer.from([0xef, 0xbb, 0xbf]);
