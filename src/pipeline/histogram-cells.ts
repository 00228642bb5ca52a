/**
 * A Prometheus histogram whose label sets are bound once (docs/behaviour.md "Operations"; the hot path of
 * `pipeline/metrics.ts`): {@link CellHistogram.labels} hands out a {@link HistogramCell} per label
 * set, and {@link HistogramCell.observe} is a bucket search and three additions — no label object,
 * no label hash, no string per observation (prom-client's own `Histogram` hashes the label set on
 * every `observe`, about a microsecond a call on this path).
 *
 * The histogram registers with a prom-client `Registry` like any of its metrics: the registry reads
 * {@link CellHistogram.get}, whose shape is prom-client's (`_bucket` with `le`, `_sum`, `_count`,
 * aggregator `sum`), so the exposition text and the cluster aggregation are prom-client's.
 *
 * @module
 */
import type { Registry } from 'prom-client';

/** One sample as prom-client's registry reads it. */
export interface HistogramSample {
  metricName: string;
  labels: Record<string, string | number>;
  value: number;
}

/** The whole histogram as prom-client's registry reads it (`get()` of its metrics). */
export interface HistogramValues {
  name: string;
  help: string;
  type: 'histogram';
  values: HistogramSample[];
  aggregator: 'sum';
}

/** One label set's counts: cumulative at read time, per bucket while observing. */
export class HistogramCell {
  /** Observations per bucket; the last slot counts those above every bound (`+Inf`). */
  readonly counts: Float64Array;
  sum = 0;
  count = 0;
  readonly #bounds: readonly number[];
  constructor(bounds: readonly number[]) {
    this.#bounds = bounds;
    this.counts = new Float64Array(bounds.length + 1);
  }
  /** One observation, in the histogram's unit (seconds here). Non-finite values are ignored. */
  observe(value: number): void {
    if (!Number.isFinite(value)) return;
    const bounds = this.#bounds;
    let i = 0;
    while (i < bounds.length && value > (bounds[i] as number)) i++;
    (this.counts[i] as number)++;
    this.sum += value;
    this.count++;
  }
}

/** Options of a {@link CellHistogram}. */
export interface CellHistogramOptions<L extends string> {
  name: string;
  help: string;
  labelNames: readonly L[];
  /** Upper bounds of the buckets, ascending (`+Inf` is added). */
  buckets: readonly number[];
  registers: readonly Registry[];
}

/** See the module documentation. */
export class CellHistogram<L extends string> {
  readonly name: string;
  readonly help: string;
  readonly type = 'histogram' as const;
  readonly aggregator = 'sum' as const;
  readonly labelNames: readonly L[];
  readonly #bounds: readonly number[];
  readonly #cells: { labels: Record<L, string>; cell: HistogramCell }[] = [];

  constructor(options: CellHistogramOptions<L>) {
    this.name = options.name;
    this.help = options.help;
    this.labelNames = options.labelNames;
    this.#bounds = [...options.buckets].sort((a, b) => a - b);
    for (const registry of options.registers) registry.registerMetric(this as unknown as Parameters<Registry['registerMetric']>[0]);
  }

  /**
   * The cell of one label set, made on each call: callers keep it (keyed by values they already
   * have) and observe through it.
   * @throws TypeError when a label of the histogram is missing or an unknown one is given.
   */
  labels(labels: Record<L, string>): HistogramCell {
    const names = Object.keys(labels);
    if (names.length !== this.labelNames.length || !this.labelNames.every((n) => typeof labels[n] === 'string')) {
      throw new TypeError(`${this.name}: labels must be exactly ${this.labelNames.join(', ')}`);
    }
    const cell = new HistogramCell(this.#bounds);
    this.#cells.push({ labels: { ...labels }, cell });
    return cell;
  }

  /** The values in prom-client's shape (read by the registry at each scrape). */
  async get(): Promise<HistogramValues> {
    // Cells of one label set (a caller that asked twice) are read as one.
    const merged = new Map<string, { labels: Record<L, string>; counts: Float64Array; sum: number; count: number }>();
    for (const { labels, cell } of this.#cells) {
      const key = this.labelNames.map((n) => labels[n]).join('\u0000');
      let into = merged.get(key);
      if (into === undefined) {
        into = { labels, counts: new Float64Array(cell.counts.length), sum: 0, count: 0 };
        merged.set(key, into);
      }
      for (let i = 0; i < cell.counts.length; i++) (into.counts[i] as number) += cell.counts[i] as number;
      into.sum += cell.sum;
      into.count += cell.count;
    }
    const values: HistogramSample[] = [];
    for (const { labels, counts, sum, count } of merged.values()) {
      let cumulative = 0;
      this.#bounds.forEach((bound, i) => {
        cumulative += counts[i] as number;
        values.push({ metricName: `${this.name}_bucket`, labels: { le: bound, ...labels }, value: cumulative });
      });
      values.push({ metricName: `${this.name}_bucket`, labels: { le: '+Inf', ...labels }, value: count });
      values.push({ metricName: `${this.name}_sum`, labels: { ...labels }, value: sum });
      values.push({ metricName: `${this.name}_count`, labels: { ...labels }, value: count });
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }
}
