/**
 * Figures of the hardening rows: each row counts what it tried and saw, records every failed check,
 * and writes one JSON file to `test-output/hardening/<id>.json`; `scripts/hardening.mjs` prints them
 * as one table. Also the scale of the run: `HARDENING_FULL=1` runs the full minimums, otherwise
 * every count is multiplied by one bounded factor (CI).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** True for the full run (`npm run test:hardening` or `HARDENING_FULL=1`). */
export const FULL = process.env.HARDENING_FULL === '1';

/** The one factor every count is multiplied by: 1 for the full run, `HARDENING_FACTOR` (default 0.05) otherwise. */
export const FACTOR = FULL ? 1 : Math.min(1, Math.max(0.001, Number(process.env.HARDENING_FACTOR ?? '0.05') || 0.05));

/** A count of the full run scaled by {@link FACTOR}, never below `floor`. */
export function scaled(full: number, floor: number): number {
  return Math.max(floor, Math.min(full, Math.ceil(full * FACTOR)));
}

/**
 * Where the rows write their figures: `HARDENING_FIGURES_DIR` (set by `scripts/hardening.mjs` to
 * `test-output/hardening`), else `test-output/hardening-bounded`, so that a concurrent `npm test`
 * never overwrites the figures of a hardening run.
 */
export const FIGURES_DIR = process.env.HARDENING_FIGURES_DIR ?? join(process.cwd(), 'test-output', 'hardening-bounded');

/** What one row writes. */
export interface RowFigures {
  id: string;
  row: number;
  title: string;
  mode: 'full' | 'bounded';
  inputs: number;
  faults: number;
  statuses: Record<string, number>;
  upstreamCallsForRejected: number;
  canaryOccurrences: number;
  cacheSizes: string;
  memory: string;
  verdict: 'pass' | 'fail';
  failures: string[];
  notes: string[];
  durationMs: number;
}

/** Collects the figures of one row; `check` records a failed expectation without stopping the row. */
export class Figures {
  readonly id: string;
  readonly row: number;
  readonly title: string;
  inputs = 0;
  faults = 0;
  readonly statuses = new Map<string, number>();
  upstreamCallsForRejected = 0;
  canaryOccurrences = 0;
  cacheSizes = '—';
  memory = '—';
  readonly failures: string[] = [];
  readonly notes: string[] = [];
  readonly #started = Date.now();
  #failureCount = 0;

  constructor(id: string, row: number, title: string) {
    this.id = id;
    this.row = row;
    this.title = title;
  }

  /** Counts one answer status (a number, or a word such as `aborted`). */
  status(status: number | string, times = 1): void {
    const key = String(status);
    this.statuses.set(key, (this.statuses.get(key) ?? 0) + times);
  }

  /** Records a failure when `ok` is false (at most 50 messages are kept; all are counted). */
  check(ok: boolean, message: string): boolean {
    if (!ok) this.fail(message);
    return ok;
  }

  fail(message: string): void {
    this.#failureCount++;
    if (this.failures.length < 50) this.failures.push(message);
  }

  note(message: string): void {
    this.notes.push(message);
  }

  get failureCount(): number {
    return this.#failureCount;
  }

  /** Runs a part of the row; an exception is recorded as a failure and rethrown. */
  async run<T>(label: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (error) {
      this.fail(`${label}: ${error instanceof Error ? error.message : String(error)}`);
      throw error;
    }
  }

  /** The figures as written to disk. */
  toJSON(): RowFigures {
    return {
      id: this.id,
      row: this.row,
      title: this.title,
      mode: FULL ? 'full' : 'bounded',
      inputs: this.inputs,
      faults: this.faults,
      statuses: Object.fromEntries([...this.statuses.entries()].sort(([a], [b]) => a.localeCompare(b))),
      upstreamCallsForRejected: this.upstreamCallsForRejected,
      canaryOccurrences: this.canaryOccurrences,
      cacheSizes: this.cacheSizes,
      memory: this.memory,
      verdict: this.#failureCount === 0 ? 'pass' : 'fail',
      failures:
        this.#failureCount > this.failures.length
          ? [...this.failures, `… ${this.#failureCount - this.failures.length} more`]
          : this.failures,
      notes: this.notes,
      durationMs: Date.now() - this.#started,
    };
  }

  /** Writes `test-output/hardening/<id>.json`. */
  write(): void {
    mkdirSync(FIGURES_DIR, { recursive: true });
    writeFileSync(join(FIGURES_DIR, `${this.id}.json`), `${JSON.stringify(this.toJSON(), null, 2)}\n`);
  }

  /** A short summary of the failures, for an assertion message. */
  summary(): string {
    return this.failures.slice(0, 10).join('\n');
  }
}
