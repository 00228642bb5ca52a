/**
 * The packed packages install anywhere (issue 41): `npm pack` of @front-proxy/browser and
 * @front-proxy/react, each tarball with its manifest, README, CHANGELOG, LICENSE and built modules
 * only, a `license`, and no install script; both installed offline into a fresh project (with react
 * from the npm cache) without an install-script warning; then a small TypeScript consumer of every
 * entry (the client, the core, one message table, the registry, the shapes, the React bindings)
 * compiles with tsc under `moduleResolution` `node` (the `types`/`typesVersions` fallbacks),
 * `node16` and `bundler` (the `exports`), reading typed answers of wallet, payments and login routes
 * and the session state as a union; and deliberate type errors in it fail under each, so the
 * compilation is real: a status assigned to a number, `user.nmae` on the closed AuthUser, a field an
 * answer typed from its schema does not have. Everything offline.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { freshProject, pack, packInstalled, type Packed, REPO, WORKSPACES } from './helpers/packages.js';

const CONSUMER = `import { createProxyClient, type ProxyClient, type SessionStatus } from '@front-proxy/browser';
import { createProxyClient as createCoreClient } from '@front-proxy/browser/core';
import { ptBR } from '@front-proxy/browser/messages/pt-BR';
import { es } from '@front-proxy/browser/messages/es';
import { classifyError } from '@front-proxy/browser/errors';
import type { ProfileResponse } from '@front-proxy/browser/shapes';
import { ProxySessionProvider, useProfile, useSession, type SessionView } from '@front-proxy/react';

const client: ProxyClient = createProxyClient({ locale: 'pt-BR' });
const lean: ProxyClient = createCoreClient({ messages: [ptBR, es], locale: 'es' });
const status: SessionStatus = client.session.status;
const expiresAt: number | null = lean.session.expiresAt;
const ref: string = classifyError({ status: 401, data: { reason: 'token_expired' }, url: '/api/auth/profile' }).ref;
export function names(p: ProfileResponse): string { return p.user.name; }
export const bindings = [ProxySessionProvider, useProfile, useSession] as const;
export type View = SessionView['status'];
export const values = [status, expiresAt, ref];
// Answers and bodies typed from the route tables' schemas: these lines compile only while they are.
export async function typedRoutes(c: ProxyClient): Promise<number> {
  const refreshed = await c.wallet.refresh();
  const missing: ('rollover' | 'rolloverAccomplished')[] = refreshed.missing;
  const balance: number | undefined = refreshed.wallet.balance;
  const deposit = await c.payments.deposit({ body: { userId: 1, creditAmount: 5000, paymentMethod: 'pix', currency: 'BRL' } });
  const cents: number | undefined = deposit.real_wallet?.balance_cents;
  const login = await c.auth.login({ body: { login: 'demo@example.com', password: 'x' } });
  const name: string = login.type === undefined ? login.user.name : login.type;
  const session = c.session.snapshot;
  const code: string = session.status === 'error' ? session.error.ref : session.status;
  return missing.length + (balance ?? 0) + (cents ?? 0) + name.length + code.length;
}
// The hooks' states narrow on status; every hook's error is a ProxyError.
export function profileLine(): string {
  const p = useProfile();
  const s = useSession();
  if (s.status === 'error') return s.error.ref;
  return p.status === 'ready' ? p.profile.user.name : p.status === 'error' ? p.error.ref : p.status;
}
`;

/**
 * Deliberate type errors, one a line, each of which must fail: a status is not a number; a closed
 * record has no `nmae`; an answer typed from its schema has no field it does not declare.
 */
const BROKEN = [
  'export const wrong: number = client.session.status;',
  'export const typo = async (c: ProxyClient): Promise<unknown> => (await c.auth.profile()).user.nmae;',
  'export const untyped = async (c: ProxyClient): Promise<unknown> => (await c.wallet.refresh()).walet;',
];

/** The compiler options of each resolution mode (the consumer's package.json says `type: module`). */
const MODES: Record<string, Record<string, unknown>> = {
  node: { module: 'commonjs', moduleResolution: 'node' },
  node16: { module: 'node16', moduleResolution: 'node16' },
  bundler: { module: 'esnext', moduleResolution: 'bundler' },
};

function tsc(dir: string, project: string): { status: number | null; output: string } {
  const result = spawnSync(process.execPath, [join(REPO, 'node_modules/typescript/bin/tsc'), '-p', project], {
    cwd: dir,
    encoding: 'utf8',
    timeout: 120_000,
  });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

describe('the packed packages install anywhere', { timeout: 420_000 }, () => {
  let work: string;
  let packed: Packed[];
  let installLog: string;
  let app: string;
  before(() => {
    work = mkdtempSync(join(tmpdir(), 'front-proxy-install-'));
    packed = WORKSPACES.map((w) => pack(w, work));
    app = join(work, 'consumer');
    installLog = freshProject(app, [
      ...packed.map((p) => p.tarball),
      ...['react', '@types/react', 'csstype'].map((name) => packInstalled(name, work)),
    ]);
  });
  after(() => rmSync(work, { recursive: true, force: true }));

  test('each tarball: manifest, README, CHANGELOG, LICENSE and built modules only; a license; no install script', () => {
    for (const p of packed) {
      for (const want of ['package.json', 'README.md', 'CHANGELOG.md', 'LICENSE'])
        assert.ok(p.files.includes(want), `${p.name} ships ${want}`);
      assert.deepEqual(
        p.files.filter((f) => !/^(package\.json|CHANGELOG\.md|README\.md|LICENSE|dist\/.*\.(js|d\.ts))$/.test(f)),
        [],
        p.name,
      );
      assert.equal(p.manifest.license, 'MIT', p.name);
      const scripts = (p.manifest.scripts ?? {}) as Record<string, string>;
      for (const s of ['preinstall', 'install', 'postinstall', 'prepare']) assert.equal(scripts[s], undefined, `${p.name}: ${s}`);
      assert.match(scripts.prepack ?? '', /build/, `${p.name}: prepack builds`);
    }
    const react = packed.find((p) => p.name === '@front-proxy/react')?.manifest ?? {};
    assert.equal(react.dependencies, undefined, 'the React bindings have no dependency of their own');
    assert.deepEqual(Object.keys((react.peerDependencies ?? {}) as object).sort(), ['@front-proxy/browser', 'react']);
  });

  test('installed offline without an install-script warning', () => {
    assert.doesNotMatch(installLog, /install-scripts|prepare/, installLog);
  });

  for (const [mode, options] of Object.entries(MODES)) {
    test(`a TypeScript consumer compiles under moduleResolution ${mode}, and a type error in it does not`, () => {
      // skipLibCheck: the declarations' own imports still resolve, or the types the consumer reads turn
      // to `any` and the deliberate error below would pass unnoticed.
      const compilerOptions = {
        ...options,
        target: 'es2022',
        lib: ['es2022', 'dom'],
        strict: true,
        noEmit: true,
        skipLibCheck: true,
        types: [],
      };
      writeFileSync(join(app, `consumer-${mode}.ts`), CONSUMER);
      writeFileSync(join(app, `broken-${mode}.ts`), `${CONSUMER}\n${BROKEN.join('\n')}\n`);
      writeFileSync(
        join(app, `tsconfig.${mode}.json`),
        JSON.stringify({ compilerOptions, files: [`consumer-${mode}.ts`, `broken-${mode}.ts`] }),
      );
      const { status, output } = tsc(app, `tsconfig.${mode}.json`);
      assert.notEqual(status, 0, output);
      const errors = output.split('\n').filter((line) => /error TS\d+/.test(line));
      const consumerLines = CONSUMER.split('\n').length;
      const at = errors.map((line) => {
        const m = new RegExp(`^broken-${mode}\\.ts\\((\\d+),\\d+\\): error (TS\\d+)`).exec(line);
        // TS2551 is TS2339 ("no such property") with a "did you mean" hint.
        return m ? `${Number(m[1]) - consumerLines} ${m[2] === 'TS2551' ? 'TS2339' : m[2]}` : line;
      });
      // Line 1: TS2322 (not assignable); lines 2 and 3: TS2339 (no such property; an open record
      // gives no error, an `unknown` answer TS18046). The consumer itself compiles.
      assert.deepEqual(at, ['1 TS2322', '2 TS2339', '3 TS2339'], output);
    });
  }
});
