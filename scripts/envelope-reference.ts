/**
 * The table of the proxy's own error names in docs/behaviour.md "Error envelope", rendered from the
 * registry (`src/proxy-errors.ts`); written by `npm run docs:envelope`, checked by
 * `test/proxy-errors.test.ts`.
 */
import { PROXY_ERRORS, type ProxyErrorRow } from '../src/proxy-errors.js';
import { withGeneratedBlock } from './generated-file.js';

/** The markers around the generated table in docs/behaviour.md. */
export const ENVELOPE_TABLE_START = "<!-- the proxy's own error names: generated from src/proxy-errors.ts by npm run docs:envelope -->";
export const ENVELOPE_TABLE_END = "<!-- end of the proxy's own error names -->";

/** The Markdown table: one row per name of the registry, in its order. */
export function renderEnvelopeTable(): string {
  const lines = ['| `error` | status | EM | default `detail` | answered by |', '|---|---|---|---|---|'];
  for (const [name, row] of Object.entries(PROXY_ERRORS) as [string, ProxyErrorRow][]) {
    const modules = row.answeredBy.map((m) => `\`${m}\``).join(', ');
    lines.push(`| \`${name}\` | ${row.status} | ${row.em ?? '—'} | ${row.detail.replace(/\|/g, '\\|')} | ${modules} |`);
  }
  return lines.join('\n');
}

/** docs/behaviour.md with its table of the proxy's own error names replaced by the generated one. */
export function withEnvelopeTable(behaviour: string): string {
  return withGeneratedBlock(behaviour, ENVELOPE_TABLE_START, ENVELOPE_TABLE_END, renderEnvelopeTable(), 'docs/behaviour.md');
}
