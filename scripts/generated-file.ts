/**
 * Writes a generated file, or with `--check` on the command line exits 1 when the file on disk
 * differs from what it would be (a missing file counts as out of date). Shared by the generators
 * (`npm run docs:api`, `npm run gen:sdk-types`).
 *
 * @param target - the file.
 * @param text - what it must hold.
 * @param name - its path in messages, e.g. `docs/api-reference.md`.
 * @param command - the command that writes it, e.g. `npm run docs:api`.
 */
import { readFileSync, writeFileSync } from 'node:fs';

export function writeOrCheck(target: URL, text: string, name: string, command: string): void {
  if (process.argv.includes('--check')) {
    let current = '';
    try {
      current = readFileSync(target, 'utf8');
    } catch {
      // missing counts as out of date
    }
    if (current !== text) {
      process.stderr.write(`${name} is out of date: run ${command}\n`);
      process.exit(1);
    }
  } else {
    writeFileSync(target, text);
    process.stdout.write(`wrote ${name}\n`);
  }
}

/**
 * `text` with the lines between the `start` and `end` marker lines replaced by `block` (the markers
 * kept). Throws when a marker is missing or out of order.
 *
 * @param name - the file's path in the message, e.g. `docs/behaviour.md`.
 */
export function withGeneratedBlock(text: string, start: string, end: string, block: string, name: string): string {
  const from = text.indexOf(start);
  const to = text.indexOf(end);
  if (from === -1 || to < from) throw new Error(`${name} has no markers ${start} … ${end}`);
  return `${text.slice(0, from + start.length)}\n${block.trimEnd()}\n${text.slice(to)}`;
}
