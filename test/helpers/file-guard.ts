/**
 * The last guard of a test file that starts servers in its own process (proxies, relays, children).
 *
 * - An error that no awaited call catches (an `uncaughtException`, an `unhandledRejection`) fails
 *   the test it came from at once, while that test's body goes on in the background; the runner
 *   prints the error only in its summary, when the file ends. It is printed here when it happens,
 *   with its stack, so that a file that then does not end still says why.
 * - Once the file's last test has ended, a process still held open (a server, a child process, a
 *   timer left by a part that failed midway) is stopped after `graceMs`, naming what still runs:
 *   the file fails in a minute instead of holding the whole run until its wall-clock limit.
 */
import { after } from 'node:test';

/** Installs the guard for the file named `name`; call once, at the top level of the file. */
export function guardFile(name: string, graceMs = 60_000): void {
  for (const event of ['uncaughtException', 'unhandledRejection'] as const) {
    process.on(event, (error: unknown) => {
      const text = error instanceof Error ? (error.stack ?? error.message) : String(error);
      console.error(`${name}: ${event}, the test it came from fails: ${text}`);
    });
  }
  after(() => {
    const timer = setTimeout(() => {
      const running = process.getActiveResourcesInfo().join(', ');
      console.error(`${name}: the process is still held open ${graceMs / 1000} s after the last test (${running}); stopped`);
      process.exit(1);
    }, graceMs);
    // Not what holds the process: a file that ends on its own ends at once.
    timer.unref();
  });
}
