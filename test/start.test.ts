/**
 * The process as `npm start` runs it (docs/behaviour.md "Commands"): no configuration, the embedded sandbox
 * behind it, the README walkthrough (login → profile → refresh → logout) over real sockets, the JWT in
 * no body and no log line, graceful exit on SIGTERM, and configuration errors (one line per problem,
 * production without its upstream URLs, a HOST that cannot be bound).
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { generateKeyPairSync, sign as cryptoSign } from 'node:crypto';
import { existsSync } from 'node:fs';
import { describe, test } from 'node:test';
import { startRecordingUpstream } from './helpers/recording-upstream.js';

const ENTRY = ['--import', 'tsx', 'src/server.ts'];

function startProcess(env: Record<string, string>): { child: ChildProcess; output: () => string; address: Promise<string> } {
  const child = spawn(process.execPath, ENTRY, {
    env: { PATH: process.env.PATH ?? '', NODE_ENV: 'development', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const address = new Promise<string>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      out += chunk.toString('utf8');
      const match = /front proxy listening on (http:\/\/[0-9.:]+)/.exec(out);
      if (match?.[1]) resolve(match[1]);
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`exited with ${code}: ${out}`)));
  });
  address.catch(() => undefined); // a process expected to fail never prints an address
  return { child, output: () => out, address };
}

/** `script` of util-linux: runs a command on a pseudo-terminal. */
const SCRIPT = '/usr/bin/script';

/** Runs the server on a pseudo-terminal until it listens; returns what it printed. */
async function onTerminal(env: Record<string, string>): Promise<string> {
  const command = [process.execPath, ...ENTRY].map((a) => `'${a}'`).join(' ');
  const child = spawn(SCRIPT, ['-qfec', command, '/dev/null'], {
    env: { PATH: process.env.PATH ?? '', NODE_ENV: 'development', TERM: 'xterm', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true, // its own process group: the server under the terminal is stopped with it
  });
  let out = '';
  try {
    await new Promise<void>((resolve, reject) => {
      const onData = (chunk: Buffer) => {
        out += chunk.toString('utf8');
        if (/listening on http:\/\/[0-9.:]+/.test(out)) resolve();
      };
      child.stdout.on('data', onData);
      child.stderr.on('data', onData);
      child.once('exit', (code) => reject(new Error(`exited with ${code}: ${out}`)));
    });
    return out;
  } finally {
    if (child.pid !== undefined) {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  }
}

function cookieOf(res: Response): string {
  const header = res.headers.get('set-cookie') ?? '';
  return header.split(';')[0] ?? '';
}

describe('npm start', () => {
  test('serves the proxy in front of the embedded sandbox; the README walkthrough works; SIGTERM exits 0', async () => {
    const proc = startProcess({ PORT: '0' });
    try {
      const base = await proc.address;
      assert.match(proc.output(), /demo@example\.com/, 'the log prints the demo logins');
      assert.equal(proc.output().split('demo@example.com').length - 1, 1, 'one banner: the demo logins are printed once');
      assert.equal(proc.output().split('listening').length - 1, 1, 'one listening line');
      assert.match(proc.output(), /front proxy listening on http:\/\/[0-9.:]+ \(API reference: \/docs, playground: \/playground\)/);
      assert.ok(
        proc
          .output()
          .trim()
          .split('\n')
          .every((line) => line.startsWith('{')),
        'JSON lines when standard output is not a terminal',
      );

      const login = await fetch(`${base}/api/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ login: 'demo@example.com', password: 'Demo#2026' }),
      });
      assert.equal(login.status, 200);
      const loginText = await login.text();
      const session = cookieOf(login);
      const jwt = session.split('=')[1] ?? '';
      assert.ok(jwt.length > 20, 'a session cookie is set');
      assert.ok(!loginText.includes(jwt), 'the JWT is not in the body');
      assert.equal((JSON.parse(loginText) as { user: { email: string } }).user.email, 'demo@example.com');

      const state = await fetch(`${base}/api/auth/session`, { headers: { cookie: session } });
      const exp = (JSON.parse(Buffer.from(jwt.split('.')[1] ?? '', 'base64url').toString('utf8')) as { exp: number }).exp;
      assert.deepEqual(await state.json(), { signedIn: true, expiresAt: exp });

      const profile = await fetch(`${base}/api/auth/profile`, { headers: { cookie: session } });
      assert.equal(profile.status, 200);
      const profileText = await profile.text();
      assert.ok(!profileText.includes(jwt));

      const refresh = await fetch(`${base}/api/auth/refresh`, { method: 'POST', headers: { cookie: session } });
      assert.equal(refresh.status, 200);
      assert.deepEqual(await refresh.json(), { ok: true });
      const renewed = cookieOf(refresh);
      assert.notEqual(renewed, session);

      const logout = await fetch(`${base}/api/auth/logout`, { method: 'POST', headers: { cookie: renewed } });
      assert.equal(logout.status, 200);
      assert.match(logout.headers.get('set-cookie') ?? '', /Max-Age=0/);

      const after = await fetch(`${base}/api/auth/profile`, { headers: { cookie: renewed } });
      assert.equal(after.status, 401);
      assert.equal(((await after.json()) as { reason: string }).reason, 'revoked');

      assert.ok(!proc.output().includes(jwt), 'the JWT never appears in a log line');
      const exited = once(proc.child, 'exit');
      proc.child.kill('SIGTERM');
      const [code] = await exited;
      assert.equal(code, 0);
    } finally {
      proc.child.kill('SIGKILL');
    }
  });

  test('npm run sandbox prints the demo logins once', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/sandbox/main.ts'], {
      env: { PATH: process.env.PATH ?? '', SANDBOX_PORT: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    try {
      await new Promise<void>((resolve, reject) => {
        const onData = (chunk: Buffer) => {
          out += chunk.toString('utf8');
          if (out.includes('Admin API') && out.includes('cancelled@example.com')) resolve();
        };
        child.stdout.on('data', onData);
        child.stderr.on('data', onData);
        child.once('exit', (code) => reject(new Error(`exited with ${code}: ${out}`)));
      });
      await new Promise((resolve) => setTimeout(resolve, 200));
      assert.equal(out.split('demo@example.com').length - 1, 1, out);
      assert.match(out, /BFF_BASE_URL=http:\/\/127\.0\.0\.1:[0-9]+/);
    } finally {
      child.kill('SIGKILL');
    }
  });

  test(
    'on a terminal: pretty lines outside production, JSON in production',
    { skip: existsSync(SCRIPT) ? false : `${SCRIPT} (util-linux) is not installed: no pseudo-terminal to run the server on` },
    async () => {
      const dev = await onTerminal({ PORT: '0' });
      assert.match(dev, /INFO.*front proxy listening on http:\/\/127\.0\.0\.1:[0-9]+/);
      assert.ok(!dev.includes('{"level"'), `no JSON line on a terminal in development: ${dev.slice(0, 300)}`);
      const prod = await onTerminal({
        PORT: '0',
        NODE_ENV: 'production',
        BFF_BASE_URL: 'http://127.0.0.1:9',
        STICKER_API_URL: 'http://127.0.0.1:9',
      });
      assert.match(prod, /\{"level":"info",.*"msg":"front proxy listening on http:\/\/127\.0\.0\.1:[0-9]+"/, prod.slice(0, 300));
    },
  );

  test('an invalid configuration stops the process with one line per problem, all at once, each naming its variable', async () => {
    const proc = startProcess({ PORT: 'x', UPSTREAM_TIMEOUT_MS: '1e3' });
    const [code] = await once(proc.child, 'close');
    assert.equal(code, 1);
    assert.deepEqual(proc.output().trim().split('\n'), [
      'PORT: expected a plain decimal integer from 0 to 65535, got "x"',
      'UPSTREAM_TIMEOUT_MS: expected a plain decimal integer from 1 to 600000, got "1e3"',
    ]);
  });

  test('production never starts the sandbox: without BFF_BASE_URL and STICKER_API_URL it stops, naming both', async () => {
    const proc = startProcess({ NODE_ENV: 'production', PORT: '0' });
    const [code] = await once(proc.child, 'close');
    assert.equal(code, 1);
    const lines = proc.output().trim().split('\n');
    assert.equal(lines.length, 2, proc.output());
    assert.match(lines[0] ?? '', /^BFF_BASE_URL: .*required with NODE_ENV=production/);
    assert.match(lines[1] ?? '', /^STICKER_API_URL: .*required with NODE_ENV=production/);
    assert.ok(!/sandbox login|listening/.test(proc.output()), 'no sandbox, no listener');
  });

  test('JWT_PUBLIC_KEY: an RSA-PSS public key starts the process and verifies PS256/384/512; a private key stops it, saying why', async () => {
    const pss = generateKeyPairSync('rsa-pss', { modulusLength: 2048 });
    const upstream = await startRecordingUpstream();
    const proc = startProcess({
      PORT: '0',
      BFF_BASE_URL: upstream.url,
      STICKER_API_URL: `${upstream.url}/sticker`,
      JWT_PUBLIC_KEY: pss.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    });
    try {
      const base = await proc.address;
      const enc = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
      for (const bits of [256, 384, 512]) {
        const input = `${enc({ alg: `PS${bits}`, typ: 'JWT' })}.${enc({ sub: '7', exp: Math.floor(Date.now() / 1000) + 600 })}`;
        const token = `${input}.${cryptoSign(`sha${bits}`, Buffer.from(input), { key: pss.privateKey, saltLength: bits / 8 }).toString('base64url')}`;
        const good = await fetch(`${base}/api/user/last-casino-games`, { headers: { cookie: `access_token=${token}` } });
        assert.equal(good.status, 200, `PS${bits}: ${await good.text()}`);
        assert.equal(upstream.requests.at(-1)?.headers.authorization, `Bearer ${token}`);
        const forged = await fetch(`${base}/api/user/last-casino-games`, {
          headers: { cookie: `access_token=${input}.${'A'.repeat(342)}` },
        });
        assert.equal(forged.status, 401);
        assert.equal(((await forged.json()) as { reason: string }).reason, 'invalid_token');
      }
    } finally {
      proc.child.kill('SIGKILL');
      await upstream.close();
    }
    for (const privateKey of [pss.privateKey, generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey]) {
      const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
      const refused = startProcess({ PORT: '0', JWT_PUBLIC_KEY: pem });
      const [code] = await once(refused.child, 'close');
      assert.equal(code, 1);
      assert.deepEqual(refused.output().trim().split('\n'), [
        "JWT_PUBLIC_KEY: give the public key, not a private key (the proxy only verifies tokens; keep the BFF's signing key out of its environment)",
      ]);
      assert.ok(!refused.output().includes(pem.split('\n')[1] ?? '-'), 'the key is not echoed');
    }
  });

  test('HOST must be an address this machine can bind', async () => {
    const malformed = startProcess({ PORT: '0', HOST: '999.1.1.1' });
    const [malformedCode] = await once(malformed.child, 'close');
    assert.equal(malformedCode, 1);
    assert.deepEqual(malformed.output().trim().split('\n'), [
      'HOST: expected an IPv4 or IPv6 address (without brackets) or a host name, got "999.1.1.1"',
    ]);
    // 192.0.2.1 (TEST-NET-1, RFC 5737) is well formed but no interface of this machine has it.
    const foreign = startProcess({ PORT: '0', HOST: '192.0.2.1' });
    const [foreignCode] = await once(foreign.child, 'close');
    assert.equal(foreignCode, 1);
    const lines = foreign.output().trim().split('\n');
    assert.equal(lines.length, 1, foreign.output());
    assert.match(lines[0] ?? '', /^HOST: cannot bind "192\.0\.2\.1": .*EADDRNOTAVAIL/);
  });
});
