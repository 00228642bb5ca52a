/**
 * The repository explains itself (docs/architecture.md "Habits" (habit 19)): every citation in a
 * tracked file points at something the repository holds.
 *
 * - No file cites a document the repository does not hold: the team's runtime contract and design
 *   notes, by file name (either case) or by their bare names in capitals. The rules
 *   they held are in docs/behaviour.md and docs/architecture.md.
 * - A section citation names a tracked file and a section of it. Its forms: `docs/operations.md
 *   "Drain"`, `docs/operations.md ("Drain")`, `docs/operations.md, "Drain"`, a Markdown link followed
 *   by the section (`[operations.md](operations.md) "Drain"`), the quotes JSON-escaped (`\"Drain\"`),
 *   and any of these broken across the line break of a comment (`*`, `//` and `#` continuations).
 *   The path is the repository's (`docs/x.md`) or relative to the citing file (`x.md` in docs/). A
 *   section is a heading of any level outside code fences, or the bold lead of a paragraph
 *   (`**Health under a storm.**`); the citation may give a heading whole or up to where it goes on
 *   after a colon, a comma or a parenthesis ("Redis topologies" for "Redis topologies: one server,
 *   Sentinel, cluster"). Only the first quoted name after the file is checked: a second one may name
 *   a point inside the section (`"Upstream answers", "Headers"`).
 * - Every `docs/<name>.md` named anywhere, and every relative Markdown link to a `.md` file, exists.
 *
 * The failure lists `file:line` of each bad citation.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { posix } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SELF = 'test/docs-citations.test.ts';
/** Tracked files that are not read: the lock file (registry data), and this file (its examples). */
const SKIPPED = new Set(['package-lock.json', SELF]);
/** Files whose capitals are not citations (the licence's legal text, at the root and in each package). */
const CAPITALS_ALLOWED = new Set(['LICENSE', 'packages/browser/LICENSE', 'packages/react/LICENSE']);

/** A file's text as one line, comment continuations removed, with where each source line starts. */
interface Flat {
  readonly text: string;
  readonly starts: readonly number[];
}

/** Joins the lines of `source`, dropping the indentation and comment marker of each line. */
function flatten(source: string): Flat {
  const starts: number[] = [];
  let text = '';
  for (const line of source.split('\n')) {
    starts.push(text.length);
    text += line.replace(/^\s*(?:\*(?!\*)|\/\/+|#+(?=\s))?\s*/, '').replace(/\r$/, '') + ' ';
  }
  return { text, starts };
}

/** The 1-based source line of an offset into a {@link Flat} text. */
function lineOf(flat: Flat, offset: number): number {
  let lo = 0;
  let hi = flat.starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if ((flat.starts[mid] ?? 0) <= offset) lo = mid;
    else hi = mid - 1;
  }
  return lo + 1;
}

/** The sections of a Markdown text: its headings outside code fences and its bold paragraph leads. */
export function sectionsOf(markdown: string): string[] {
  const sections: string[] = [];
  let fence: string | undefined;
  for (const line of markdown.split('\n')) {
    const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (marker && (fence === undefined || marker.startsWith(fence))) {
      fence = fence === undefined ? marker : undefined;
      continue;
    }
    if (fence !== undefined) continue;
    const heading = /^#{1,6}\s+(.+?)\s*#*\s*$/.exec(line)?.[1];
    if (heading) sections.push(heading.replace(/\s+/g, ' '));
    const lead = /^\s*(?:[-*+]\s+|\d+\.\s+)?\*\*([^*]+?)[.:]?\*\*/.exec(line)?.[1];
    if (lead) sections.push(lead.replace(/\s+/g, ' '));
  }
  return sections;
}

/** Whether `cited` names `section`: the whole of it, or the part before it goes on after `:`, `,` or `(`. */
export function names(cited: string, section: string): boolean {
  if (cited === section) return true;
  return section.startsWith(cited) && /^(?:\s*[:,.]|\s+[(—–-])/.test(section.slice(cited.length));
}

/** One bad citation. */
export interface Problem {
  readonly file: string;
  readonly line: number;
  readonly problem: string;
}

// A path ending in .md, not the tail of a longer one (`x/docs/a.md`) nor of a URL.
const MD_PATH = String.raw`(?<![\w./:@-])((?:\.{1,2}/)*[\w-][\w.-]*(?:/[\w.-]+)*\.md)\b`;
// What introduces the section after the file: a space, `, `, `(`; the quote possibly JSON-escaped.
// A section name starts with a letter, a digit or a back-quote.
const SECTION = String.raw`(?:,?\s+\(?|\s*\()\\?"([\w\`][^"\\]{0,160}?)\s*\\?"`;
const PLAIN_CITATION = new RegExp(MD_PATH + SECTION, 'g');
const LINK_CITATION = new RegExp(String.raw`\[[^\]]*\]\(([^)\s#]+\.md)(?:#[^)\s]*)?\)` + SECTION, 'g');
const LINK = /\[[^\]]*\]\(([^)\s#]+\.md)(?:#[^)\s]*)?\)/g;
const DOCS_PATH = /(?<![\w./-])(?:\.\.\/)*(docs\/[\w./-]*?\.md)\b/g;
/** The team documents' names, spelt so that this file does not hold them. */
const TEAM = ['CON' + 'TRACT', 'DES' + 'IGN'] as const;
const TEAM_FILE = new RegExp(String.raw`\b(?:${TEAM.join('|')})\.md\b`, 'gi');
const TEAM_CAPITALS = new RegExp(String.raw`\b(?:${TEAM.join('|')})\b(?!\.md)`, 'g');

/**
 * The bad citations of `files` (path → text, every tracked file that is read). Paths are the
 * repository's, with `/`.
 */
export function findProblems(files: ReadonlyMap<string, string>): Problem[] {
  const problems: Problem[] = [];
  const sections = new Map<string, string[]>();
  const sectionsOfFile = (path: string): string[] => {
    let found = sections.get(path);
    if (!found) sections.set(path, (found = sectionsOf(files.get(path) ?? '')));
    return found;
  };
  /** The tracked file a path names from `from`: the repository's path first, then relative to `from`. */
  const resolve = (path: string, from: string): string | undefined => {
    const candidates = /^\.{1,2}\//.test(path)
      ? [posix.normalize(posix.join(posix.dirname(from), path))]
      : [posix.normalize(path), posix.normalize(posix.join(posix.dirname(from), path))];
    return candidates.find((c) => files.has(c));
  };

  for (const [file, source] of files) {
    const flat = flatten(source);
    const report = (offset: number, problem: string) => problems.push({ file, line: lineOf(flat, offset), problem });

    for (const m of flat.text.matchAll(TEAM_FILE))
      report(m.index, `cites ${m[0]}, which the repository does not hold (docs/behaviour.md, docs/architecture.md "Habits")`);
    if (!CAPITALS_ALLOWED.has(file)) {
      for (const m of flat.text.matchAll(TEAM_CAPITALS))
        report(m.index, `cites ${m[0]} (the team's document), which the repository does not hold`);
    }

    for (const pattern of [LINK_CITATION, PLAIN_CITATION]) {
      for (const m of flat.text.matchAll(pattern)) {
        const [, path = '', cited = ''] = m;
        if (TEAM.some((t) => posix.basename(path).toUpperCase() === `${t}.MD`)) continue; // reported above
        const target = resolve(path, file);
        const name = cited.replace(/\s+/g, ' ');
        if (!target) report(m.index, `cites ${path} "${name}": no such file`);
        else if (!target.endsWith('.md') || !sectionsOfFile(target).some((s) => names(name, s))) {
          report(m.index, `cites ${path} "${name}": ${target} has no such heading`);
        }
      }
    }

    for (const m of flat.text.matchAll(DOCS_PATH)) {
      const path = m[1] ?? '';
      if (!files.has(path) && !resolve(path, file)) report(m.index, `names ${path}: no such file`);
    }
    if (file.endsWith('.md')) {
      for (const m of flat.text.matchAll(LINK)) {
        const path = m[1] ?? '';
        if (/^[a-z][\w+.-]*:/i.test(path)) continue; // a URL
        if (!files.has(posix.normalize(posix.join(posix.dirname(file), path)))) report(m.index, `links to ${path}: no such file`);
      }
    }
  }
  return problems;
}

/** Every tracked file that is read, as text (binary files, holding a NUL byte, are left out). */
function trackedFiles(): Map<string, string> {
  const files = new Map<string, string>();
  const listed = execFileSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  for (const path of listed.split('\0')) {
    if (!path || SKIPPED.has(path)) continue;
    let text: string;
    try {
      text = readFileSync(posix.join(ROOT, path), 'utf8');
    } catch {
      continue; // deleted in the work tree, not yet in the index
    }
    if (!text.includes('\0')) files.set(path, text);
  }
  return files;
}

const format = (problems: readonly Problem[]): string => problems.map((p) => `${p.file}:${p.line}: ${p.problem}`).join('\n');

describe('the citation checker', () => {
  const doc = ['# Title', '', '## Drain: SIGTERM', '', '```sh', '# Not a heading', '```', '', '**Health under a storm.** Text.', ''].join(
    '\n',
  );
  const cases: ReadonlyArray<{ readonly name: string; readonly source: string; readonly expected: readonly string[] }> = [
    { name: 'a heading cited whole', source: 'see docs/ops.md "Drain: SIGTERM".', expected: [] },
    { name: 'a heading cited up to its colon', source: '// docs/ops.md "Drain"', expected: [] },
    { name: 'a bold paragraph lead, in parentheses', source: '(docs/ops.md ("Health under a storm"))', expected: [] },
    { name: 'a comma before the section', source: 'docs/ops.md, "Health under a storm"', expected: [] },
    {
      name: 'a heading that is not there',
      source: 'x\n// docs/ops.md "Drains"',
      expected: ['a.ts:2: cites docs/ops.md "Drains": docs/ops.md has no such heading'],
    },
    {
      name: 'a heading inside a code fence is none',
      source: 'docs/ops.md "Not a heading"',
      expected: ['a.ts:1: cites docs/ops.md "Not a heading": docs/ops.md has no such heading'],
    },
    {
      name: 'a prefix that stops inside a word',
      source: 'docs/ops.md "Dra"',
      expected: ['a.ts:1: cites docs/ops.md "Dra": docs/ops.md has no such heading'],
    },
    {
      name: 'a missing file',
      source: '/**\n * docs/nope.md "Drain"\n */',
      expected: ['a.ts:2: cites docs/nope.md "Drain": no such file', 'a.ts:2: names docs/nope.md: no such file'],
    },
    {
      name: 'a citation broken across comment lines',
      source: '/**\n * Text (docs/ops.md\n * "Health under a\n * storm") and docs/ops.md "Health under a\n * stone".\n */',
      expected: ['a.ts:4: cites docs/ops.md "Health under a stone": docs/ops.md has no such heading'],
    },
    {
      name: 'JSON-escaped quotes',
      source: '{ "d": "a (docs/ops.md \\"Drain\\"), b (docs/ops.md \\"Rain\\")" }',
      expected: ['a.ts:1: cites docs/ops.md "Rain": docs/ops.md has no such heading'],
    },
    {
      name: 'the team documents, by name and in capitals',
      source: `# x\n// ${TEAM[0]}.md "Drain"; ${TEAM[1].toLowerCase()}.md\n// ${TEAM[1]} habit 9\n`,
      expected: [`a.ts:2: cites ${TEAM[0]}.md`, `a.ts:2: cites ${TEAM[1].toLowerCase()}.md`, `a.ts:3: cites ${TEAM[1]} (the team`],
    },
    {
      name: 'a path that only ends like a doc is not one',
      source: 'https://example.com/docs/ops.md "Nope" and packages/x/docs/ops.md',
      expected: [],
    },
  ];
  for (const { name, source, expected } of cases) {
    test(name, () => {
      const problems = format(
        findProblems(
          new Map([
            ['docs/ops.md', doc],
            ['a.ts', source],
          ]),
        ),
      )
        .split('\n')
        .filter(Boolean);
      assert.equal(problems.length, expected.length, problems.join('\n'));
      expected.forEach((e, i) => assert.ok(problems[i]?.startsWith(e), `${problems[i]} should start with ${e}`));
    });
  }

  test('paths relative to a doc, and links, resolve from its directory', () => {
    const files = new Map([
      ['docs/ops.md', doc],
      [
        'docs/b.md',
        'As [ops.md](ops.md) "Drain" and ops.md "Health under a storm"; [ops](ops.md#drain-sigterm); [x](x.md) "Drain"; [root](../README.md)',
      ],
      ['README.md', '[ops](docs/ops.md) "Drain", docs/ops.md "Title"'],
    ]);
    assert.deepEqual(format(findProblems(files)).split('\n'), [
      'docs/b.md:1: cites x.md "Drain": no such file',
      'docs/b.md:1: links to x.md: no such file',
    ]);
  });
});

describe('the repository', () => {
  test('cites only files and headings it holds', () => {
    const files = trackedFiles();
    assert.ok(files.has('docs/behaviour.md') && files.size > 100, `${files.size} tracked files read`);
    const problems = findProblems(files);
    assert.equal(problems.length, 0, `${problems.length} bad citations:\n${format(problems)}`);
  });
});
