/**
 * A raw HTTP/1.1 client for path-safety tests: the request line is written byte for byte as given
 * (no dot-segment removal, no re-encoding, unlike `fetch`), over a plain socket.
 */
import { connect } from 'node:net';

/** The status line and body of a raw answer. */
export interface RawAnswer {
  status: number;
  headers: string;
  body: string;
}

/**
 * Sends `<method> <target> HTTP/1.1` to `base` (an `http://host:port` URL) with `Connection: close`
 * and returns the answer. `target` is written exactly as given (UTF-8).
 */
export function rawRequest(base: string, method: string, target: string, headers: Record<string, string> = {}): Promise<RawAnswer> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname);
    const chunks: Buffer[] = [];
    socket.setTimeout(5_000, () => socket.destroy(new Error('raw request timed out')));
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const [head = '', ...rest] = text.split('\r\n\r\n');
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1] ?? 0);
      resolve({ status, headers: head, body: rest.join('\r\n\r\n') });
    });
    const lines = [`${method} ${target} HTTP/1.1`, `Host: ${url.host}`, 'Connection: close'];
    for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
    socket.write(Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'utf8'));
  });
}
