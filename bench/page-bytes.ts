/**
 * The bytes of one page by content coding: the page is fetched once with each `Accept-Encoding`
 * (`identity`, `gzip`, `br`, and a browser's `gzip, deflate, br, zstd`), and every encoded answer is
 * decoded and compared with the identity answer. A proxy that does not compress answers every request
 * with the identity bytes and no `Content-Encoding`: the figures of the codings it did not send stay
 * empty (never the identity bytes under another name).
 *
 * @module
 */
import zlib from 'node:zlib';
import { request } from 'undici';

/** The `Accept-Encoding` a current browser sends. */
export const BROWSER_ACCEPT_ENCODING = 'gzip, deflate, br, zstd';

/** The `Accept-Encoding` values the page is fetched with, in the order they are reported. */
export const PAGE_ENCODINGS = ['identity', 'gzip', 'br', BROWSER_ACCEPT_ENCODING] as const;

/** One answer of the page. */
export interface EncodedAnswer {
  /** The request's `Accept-Encoding`. */
  acceptEncoding: string;
  status: number;
  /** The answer's `Content-Encoding` (lower case); `null`: none (identity). */
  contentEncoding: string | null;
  /** Body bytes as received. */
  bytes: number;
  vary: string | null;
  etag: string | null;
  /**
   * Whether the decoded body equals the identity answer's body: `null` when the answer is not encoded
   * or its coding cannot be decoded here (`zstd` before Node.js 22.15).
   */
  decodesToIdentity: boolean | null;
}

/** The page's bytes by content coding. */
export interface PageBytes {
  path: string;
  answers: EncodedAnswer[];
  /** Bytes of the `gzip` answer as a share of the identity answer's; `null` when it came without `Content-Encoding: gzip`. */
  gzipShare: number | null;
  /** Bytes of the `br` answer as a share of the identity answer's; `null` when it came without `Content-Encoding: br`. */
  brShare: number | null;
}

function header(headers: Record<string, string | string[] | undefined>, name: string): string | null {
  const value = headers[name];
  if (value === undefined) return null;
  return Array.isArray(value) ? value.join(', ') : value;
}

/** Decodes a body of `coding`; `undefined` when this Node.js cannot decode it. */
function decode(coding: string, body: Buffer): Buffer | undefined {
  switch (coding) {
    case 'gzip':
    case 'x-gzip':
      return zlib.gunzipSync(body);
    case 'br':
      return zlib.brotliDecompressSync(body);
    case 'deflate':
      try {
        return zlib.inflateSync(body);
      } catch {
        return zlib.inflateRawSync(body);
      }
    case 'zstd': {
      const zstd = (zlib as { zstdDecompressSync?: (b: Buffer) => Buffer }).zstdDecompressSync;
      return zstd ? zstd(body) : undefined;
    }
    default:
      return undefined;
  }
}

/**
 * Fetches `url` once with each of {@link PAGE_ENCODINGS} (and `headers`), in turn.
 * @param headers - headers of every request besides `Accept-Encoding` (e.g. the client's address).
 */
export async function pageBytes(url: string, headers: Readonly<Record<string, string>> = {}): Promise<PageBytes> {
  const fetched: { answer: EncodedAnswer; body: Buffer }[] = [];
  for (const acceptEncoding of PAGE_ENCODINGS) {
    const res = await request(url, { headers: { ...headers, 'accept-encoding': acceptEncoding } });
    const body = Buffer.from(await res.body.arrayBuffer());
    const coding = header(res.headers, 'content-encoding')?.trim().toLowerCase() || null;
    fetched.push({
      answer: {
        acceptEncoding,
        status: res.statusCode,
        contentEncoding: coding === 'identity' ? null : coding,
        bytes: body.length,
        vary: header(res.headers, 'vary'),
        etag: header(res.headers, 'etag'),
        decodesToIdentity: null,
      },
      body,
    });
  }
  const identity = fetched[0]?.body ?? Buffer.alloc(0);
  for (const { answer, body } of fetched) {
    if (answer.contentEncoding === null) continue;
    let decoded: Buffer | undefined;
    try {
      decoded = decode(answer.contentEncoding, body);
    } catch {
      answer.decodesToIdentity = false;
      continue;
    }
    answer.decodesToIdentity = decoded === undefined ? null : decoded.equals(identity);
  }
  const answers = fetched.map((f) => f.answer);
  const share = (coding: string): number | null => {
    const answer = answers.find((a) => a.acceptEncoding === coding);
    return answer?.contentEncoding === coding && identity.length > 0 ? answer.bytes / identity.length : null;
  };
  const { pathname, search } = new URL(url);
  return { path: pathname + search, answers, gzipShare: share('gzip'), brShare: share('br') };
}

function accepts(acceptEncoding: string, coding: string): boolean {
  return acceptEncoding
    .split(',')
    .map((part) => part.split(';')[0]?.trim().toLowerCase())
    .some((name) => name === coding || name === '*');
}

/**
 * What is wrong with the answers (empty when nothing is): a status other than 200, an identity request
 * answered encoded, a coding the request did not accept, an encoded body that does not decode to the
 * identity body, or, once the proxy encodes, an answer without `Vary: Accept-Encoding`.
 */
export function pageBytesProblems(page: PageBytes): string[] {
  const problems: string[] = [];
  const anyEncoded = page.answers.some((a) => a.contentEncoding !== null);
  for (const a of page.answers) {
    const asked = `Accept-Encoding: ${a.acceptEncoding}`;
    if (a.status !== 200) problems.push(`${asked} answered ${a.status}`);
    if (a.contentEncoding !== null && !accepts(a.acceptEncoding, a.contentEncoding)) {
      problems.push(`${asked} answered Content-Encoding: ${a.contentEncoding}, which it does not accept`);
    }
    if (a.decodesToIdentity === false) problems.push(`${asked}: the ${a.contentEncoding} body does not decode to the identity body`);
    if (
      anyEncoded &&
      !(a.vary ?? '')
        .toLowerCase()
        .split(',')
        .some((v) => v.trim() === 'accept-encoding' || v.trim() === '*')
    ) {
      problems.push(`${asked}: no Vary: Accept-Encoding although the page is sent encoded`);
    }
  }
  return problems;
}

function fmtBytes(value: number): string {
  return value.toLocaleString('en-US');
}

function fmtShare(share: number): string {
  return `${(share * 100).toFixed(1)}%`;
}

/**
 * The page's bytes as a small table: one line per `Accept-Encoding`, the `Content-Encoding` answered,
 * the body bytes (`—` when the answer was not in the coding asked for), the share of the identity
 * bytes and whether the body decodes to the identity body.
 */
export function formatPageBytes(page: PageBytes, label = (acceptEncoding: string) => acceptEncoding): string {
  const identity = page.answers.find((a) => a.acceptEncoding === 'identity');
  const header = ['Accept-Encoding', 'Content-Encoding', 'bytes', 'share of identity', 'decodes to identity'];
  const lines = page.answers.map((a) => {
    const isIdentity = a.acceptEncoding === 'identity';
    // Asked for a coding and got none: the identity bytes again, not a figure of that coding.
    const sent = isIdentity || a.contentEncoding !== null;
    return [
      label(a.acceptEncoding),
      a.contentEncoding ?? (isIdentity ? 'none' : 'none (identity sent)'),
      sent ? fmtBytes(a.bytes) : '—',
      sent && identity && identity.bytes > 0 ? fmtShare(a.bytes / identity.bytes) : '—',
      a.decodesToIdentity === null ? (isIdentity || !sent ? '—' : 'not decodable here') : a.decodesToIdentity ? 'yes' : 'NO',
    ];
  });
  const all = [header, ...lines];
  const widths = header.map((_, i) => Math.max(...all.map((l) => (l[i] ?? '').length)));
  const row = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join(' | ')} |`;
  return [row(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...lines.map(row)].join('\n');
}
