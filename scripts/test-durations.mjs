// A reporter of node's test runner (`--test-reporter`) that prints nothing: for every top-level test
// or suite of a file (an event of nesting 0) it appends `<duration_ms>\t<file>` to the file named by
// TEST_DURATIONS_FILE, at once, since `--test-force-exit` may end the run before a reporter's last
// word. A file's time is the sum of its lines: its import and top-level hooks are not in it.
// `scripts/run-tests.mjs` prints the table.
import { appendFileSync } from 'node:fs';

export default async function* durations(source) {
  const target = process.env.TEST_DURATIONS_FILE;
  for await (const event of source) {
    if (target && (event.type === 'test:pass' || event.type === 'test:fail') && event.data.nesting === 0 && event.data.file) {
      appendFileSync(target, `${event.data.details?.duration_ms ?? 0}\t${event.data.file}\n`);
    }
  }
  yield '';
}
