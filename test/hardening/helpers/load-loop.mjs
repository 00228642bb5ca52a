/**
 * A load loop on a thread of its own (row 16): `clients` loops send `GET path` to `base`, each with
 * the next of `cookies`, until `durationMs` has passed, and post back the count of answers per status
 * (`error` for a failed request). On its own thread, at a lower priority (Linux: `setPriority` of the
 * calling thread), the loops' work does not delay the requests the test's thread times.
 *
 * With `giveUpMs`, each client gives up on a request after that many milliseconds (the request is
 * aborted, its connection closed) and asks again at once; such requests are counted as `aborted`.
 * With `leaveAtEnd`, the clients leave when `durationMs` has passed: the requests still waiting are
 * given up then (counted as `aborted`) and every connection closed, so that the load ends at a known
 * time; without it, each loop ends with its last answer.
 *
 * workerData: `{ base: string, path: string, clients: number, durationMs: number, cookies: string[], giveUpMs?: number, leaveAtEnd?: boolean }`.
 */
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { Pool } from 'undici';

const { base, path, clients, durationMs, cookies, giveUpMs, leaveAtEnd } = workerData;
// This thread only makes load: the threads that answer (the fake BFF) and time answers go first.
try {
  setPriority(10);
} catch {
  // not allowed here: the load runs at the usual priority
}
const pool = new Pool(base, { connections: clients, pipelining: 1, keepAliveTimeout: 30_000 });
const counts = {};
const until = performance.now() + durationMs;
const end = new AbortController();
const leave = leaveAtEnd ? setTimeout(() => end.abort(), durationMs) : undefined;
let turn = 0;
await Promise.all(
  Array.from({ length: clients }, async () => {
    while (performance.now() < until) {
      let key = 'error';
      try {
        const signals = [...(giveUpMs === undefined ? [] : [AbortSignal.timeout(giveUpMs)]), ...(leaveAtEnd ? [end.signal] : [])];
        const signal = signals.length === 0 ? undefined : AbortSignal.any(signals);
        const res = await pool.request({ method: 'GET', path, headers: { cookie: cookies[turn++ % cookies.length] }, signal });
        await res.body.dump();
        key = String(res.statusCode);
      } catch (error) {
        // counted as `error`, or `aborted` when the client gave up
        if (error?.name === 'TimeoutError' || error?.name === 'AbortError' || error?.code === 'UND_ERR_ABORTED') key = 'aborted';
      }
      counts[key] = (counts[key] ?? 0) + 1;
    }
  }),
);
clearTimeout(leave);
if (leaveAtEnd) {
  // Leaving is part of the load's end: at the usual priority, so that the loops timed beside it (on the
  // same CPU) do not hold this thread's last closes back by seconds.
  try {
    setPriority(0);
  } catch {
    // not allowed here: it leaves at the lower priority
  }
}
await pool.destroy();
parentPort.postMessage(counts);
