/**
 * The decoding of upstream answers (docs/behaviour.md "Upstream answers"): undici's decompression
 * interceptor for a pool, and what a call refuses once it ran — a coding left in `Content-Encoding`.
 *
 * @module
 */
import { type Dispatcher, interceptors } from 'undici';
import { UpstreamError } from './errors.js';

/** Whether undici's one warning about its interceptor has been kept out already (it emits it once per process). */
let warningPassed = false;

/**
 * undici's decompression interceptor for a pool: every status is decoded (an error page may be coded
 * too), the decoded bytes stop at `limit` (`0`: no limit, for the live streams, which have no end).
 */
export function decompression(limit: number): Dispatcher.DispatcherComposeInterceptor {
  const options = { skipErrorResponses: false, skipStatusCodes: [204, 304], maxSize: limit };
  if (warningPassed) return interceptors.decompress(options);
  // undici flags the interceptor experimental with a process warning, once, at its first creation,
  // and has no option to leave it out. What the proxy relies on (every coding decoded, the size
  // bound, an unknown coding left in place) is tested over real sockets on each supported Node.js
  // line (test/hardening/odd-answers.test.ts), so that one warning alone is kept out of the
  // operators' logs; process.emitWarning is itself again before this returns.
  const emitWarning = process.emitWarning;
  process.emitWarning = ((warning: string | Error, ...rest: unknown[]) => {
    if (String(typeof warning === 'string' ? warning : warning.message).startsWith('DecompressInterceptor')) return;
    (emitWarning as (...args: unknown[]) => void).call(process, warning, ...rest);
  }) as typeof process.emitWarning;
  try {
    return interceptors.decompress(options);
  } finally {
    process.emitWarning = emitWarning;
    warningPassed = true;
  }
}

/**
 * The codings a recipient may see after decoding: none, or `identity`. Anything else left in
 * `Content-Encoding` once the interceptor ran is a coding the proxy cannot decode.
 */
export function isDecodedCoding(value: string | string[] | undefined): boolean {
  if (value === undefined) return true;
  const text = (Array.isArray(value) ? value.join(',') : value).trim().toLowerCase();
  return text === '' || text === 'identity';
}

/** The failure of an answer whose `Content-Encoding` names a coding the proxy cannot decode. */
export function unknownCoding(): UpstreamError {
  return new UpstreamError('upstream_bad_response', { detail: 'The service sent an answer in a coding the proxy cannot read' });
}
