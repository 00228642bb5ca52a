/**
 * The registry of the proxy's own error names (`src/proxy-errors.ts`, docs/behaviour.md "Error envelope"):
 * every name an envelope is made with in `src/` is a row, and its module is one the row lists; every
 * row's modules exist and make it; its EM code is the classifier's; a name outside the registry does
 * not compile; the table of docs/behaviour.md is the one `npm run docs:envelope` renders.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { errorCodeForReason } from '../src/errors/index.js';
import { isProxyErrorName, PROXY_ERRORS, type ProxyErrorName, type ProxyErrorRow } from '../src/proxy-errors.js';
import { UPSTREAM_FAILURES } from '../src/upstream/errors.js';
import { withEnvelopeTable } from '../scripts/envelope-reference.js';

const SRC = fileURLToPath(new URL('../src', import.meta.url));
const ROWS = Object.entries(PROXY_ERRORS) as [ProxyErrorName, ProxyErrorRow][];

/**
 * The places a module (as printed without comments: strings in double quotes) names an envelope's `error`: `envelope('x'`, `envelopeText('x'`, `fail(400, 'x'`,
 * and the `error: 'x'` of a table of answers.
 */
const MAKERS = [/\benvelope(?:Text)?\(\s*"([a-z0-9_]+)"/g, /\bfail\(\s*\d{3},\s*"([a-z0-9_]+)"/g, /\berror: "([a-z0-9_]+)"/g];

const WITHOUT_COMMENTS = ts.createPrinter({ removeComments: true });

/** The modules of the proxy (not the sandbox BFF, the doctor or the playground's page) by path under src/. */
function proxyModules(): Map<string, string> {
  const out = new Map<string, string>();
  for (const entry of readdirSync(SRC, { recursive: true, encoding: 'utf8' })) {
    if (!entry.endsWith('.ts') || /^(?:sandbox|doctor|errors|browser)\//.test(entry)) continue;
    // Comments do not count: a docstring's example makes no answer.
    const source = ts.createSourceFile(entry, readFileSync(join(SRC, entry), 'utf8'), ts.ScriptTarget.Latest);
    out.set(entry.split('\\').join('/'), WITHOUT_COMMENTS.printFile(source));
  }
  return out;
}

describe("the registry of the proxy's own error names", () => {
  const modules = proxyModules();

  test('every name an envelope is made with is a row that lists the module making it', () => {
    const found: string[] = [];
    for (const [path, source] of modules) {
      for (const pattern of MAKERS) {
        for (const match of source.matchAll(pattern)) {
          const name = match[1] as string;
          found.push(name);
          assert.ok(isProxyErrorName(name), `${path}: '${name}' is not in src/proxy-errors.ts`);
          assert.ok(
            (PROXY_ERRORS[name].answeredBy as readonly string[]).includes(path),
            `${path} makes '${name}' but its row does not list it`,
          );
        }
      }
    }
    // The scan reads the real call sites: a pattern that matched nothing would pass vacuously.
    for (const name of ['csrf_rejected', 'overloaded', 'rate_limited', 'invalid_request', 'not_found', 'user_mismatch']) {
      assert.ok(found.includes(name), `no module was seen making '${name}'`);
    }
  });

  test("every row's modules exist, and a name that is not an upstream failure is written in each", () => {
    for (const [name, row] of ROWS) {
      assert.ok(row.answeredBy.length > 0, `${name}: answered by no module`);
      for (const path of row.answeredBy) {
        assert.ok(existsSync(join(SRC, path)), `${name}: ${path} does not exist`);
        if (name in UPSTREAM_FAILURES) continue;
        assert.ok(modules.get(path)?.includes(`"${name}"`), `${name}: ${path} never names it`);
      }
    }
  });

  test('names are snake_case, statuses are error statuses, details are single sentences', () => {
    for (const [name, row] of ROWS) {
      assert.match(name, /^[a-z][a-z0-9_]{1,63}$/);
      assert.ok(Number.isInteger(row.status) && row.status >= 400 && row.status <= 599, `${name}: ${row.status}`);
      assert.ok(row.detail.length > 0 && row.detail.length <= 300 && !row.detail.includes('\n'), `${name}: ${row.detail}`);
    }
  });

  test('an upstream failure keeps the status and detail of the upstream table', () => {
    for (const [code, info] of Object.entries(UPSTREAM_FAILURES)) {
      assert.ok(isProxyErrorName(code), code);
      assert.equal(PROXY_ERRORS[code].status, info.status, code);
      assert.equal(PROXY_ERRORS[code].detail, info.detail, code);
    }
  });

  test("the EM code of a row is the classifier's for its name and status, absent when that is the fallback EM0099", () => {
    for (const [name, row] of ROWS) {
      const classified = errorCodeForReason(row.status, name);
      assert.equal(row.em, classified === 'EM0099' ? undefined : classified, name);
    }
  });

  test('docs/behaviour.md holds the table npm run docs:envelope renders', () => {
    const behaviour = readFileSync(new URL('../docs/behaviour.md', import.meta.url), 'utf8');
    assert.equal(behaviour, withEnvelopeTable(behaviour), 'docs/behaviour.md is out of date: run npm run docs:envelope');
    for (const [name] of ROWS) assert.ok(behaviour.includes(`| \`${name}\` |`), name);
  });
});

describe('envelope(code)', () => {
  /** The diagnostics of compiling `code` as a module of test/ (against the real src/envelope.ts). */
  function diagnosticsOf(code: string): string[] {
    const file = fileURLToPath(new URL('./proxy-errors.probe.ts', import.meta.url));
    const options: ts.CompilerOptions = {
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      types: ['node'],
    };
    const host = ts.createCompilerHost(options);
    const read = host.readFile.bind(host);
    host.readFile = (name) => (name === file ? code : read(name));
    host.fileExists = (
      (exists) => (name: string) =>
        name === file || exists(name)
    )(host.fileExists.bind(host));
    const program = ts.createProgram([file], options, host);
    return ts.getPreEmitDiagnostics(program, program.getSourceFile(file)).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
  }

  test('a name outside the registry does not compile; a name of it does', () => {
    const head = "import { envelope, envelopeText } from '../src/envelope.js';\n";
    assert.deepEqual(diagnosticsOf(`${head}envelope('csrf_rejected');\nenvelopeText('overloaded', 'x');\n`), []);
    const refused = diagnosticsOf(`${head}envelope('no_such_error', 'x');\nenvelopeText('csrf_refused', 'x');\n`);
    assert.equal(refused.length, 2, refused.join('\n'));
    for (const message of refused) assert.match(message, /is not assignable to parameter of type/);
  });
});
