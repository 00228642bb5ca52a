/**
 * Real processes for the fleet tests: proxy instances started as `npm start` starts them (`node` with
 * package.json's options on `dist/server.js`, built by `npm test`), each on its own loopback port so
 * that a restarted instance comes back where it was; and a real `nginx` (Debian's; `.ci/run` installs
 * it) running the shipped one-origin configuration (`deploy/nginx/front-proxy.conf`), round-robining
 * `/api/` over them with keep-alive upstream connections. Everything is stopped by PID.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './proxy-process.js';

const NGINX = ['/usr/sbin/nginx', 'nginx'].find((bin) => spawnSync(bin, ['-v']).status === 0);
/** True when an `nginx` binary can be run. */
export const HAVE_NGINX = NGINX !== undefined;

/** The Node.js options of `npm start` (package.json `scripts.start`: `node <options> dist/server.js`). */
function startOptions(): string[] {
  const start = (JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: { start: string } }).scripts.start;
  return start.split(/\s+/).filter((word) => word.startsWith('--'));
}

/** One proxy process. */
export interface ProxyProcess {
  readonly port: number;
  readonly url: string;
  /** Output so far (standard output and error). */
  readonly output: () => string;
  /** Starts it (again) on its port; resolves once it listens. */
  start(): Promise<void>;
  /** Sends `signal` and resolves when the process has exited. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** A proxy process on a port of its own with `env` (PORT and HOST are set here). */
export async function proxyProcess(env: Record<string, string>): Promise<ProxyProcess> {
  const port = await freePort();
  let child: ChildProcess | undefined;
  let output = '';
  const start = async () => {
    output = '';
    const proc = spawn(process.execPath, [...startOptions(), 'dist/server.js'], {
      env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'warn', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = proc;
    proc.stdout?.on('data', (c: Buffer) => (output += c.toString('utf8')));
    proc.stderr?.on('data', (c: Buffer) => (output += c.toString('utf8')));
    const deadline = Date.now() + 20_000;
    for (;;) {
      if (proc.exitCode !== null) throw new Error(`proxy exited with ${proc.exitCode}: ${output.slice(-800)}`);
      try {
        if ((await fetch(`http://127.0.0.1:${port}/healthz`)).ok) return;
      } catch {
        // not listening yet
      }
      if (Date.now() > deadline) throw new Error(`proxy did not listen: ${output.slice(-800)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  const stop = async (signal: NodeJS.Signals = 'SIGTERM') => {
    const proc = child;
    child = undefined;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return proc?.exitCode ?? null;
    return new Promise<number | null>((resolve) => {
      proc.once('exit', (code) => resolve(code));
      proc.kill(signal);
    });
  };
  return { port, url: `http://127.0.0.1:${port}`, output: () => output, start, stop };
}

/** A running nginx. */
export interface TestNginx {
  readonly url: string;
  /** The access log (`$request_method $status "$upstream_addr" "$upstream_status"` per line), when asked for. */
  readonly accessLog: string | undefined;
  stop(): Promise<void>;
}

/** How {@link startNginx} passes requests on. */
export interface NginxOptions {
  /** `proxy_next_upstream` (default `error timeout`: a refused connection goes to the next instance). */
  nextUpstream?: string;
  /** Write an access log with the upstreams each request tried. */
  accessLog?: boolean;
}

/** The nginx configuration shipped for one origin (docs/deployment.md), which the fleet tests run. */
export const NGINX_CONF = 'deploy/nginx/front-proxy.conf';

/** The front end's page that nginx serves from its `root` in the tests. */
export const FRONT_END_PAGE = '<!doctype html><title>front end</title><p>the front end</p>';

/**
 * {@link NGINX_CONF} with a test's addresses: the instances' ports in `upstream front_proxy`, a loopback
 * `listen`, `root` a folder holding {@link FRONT_END_PAGE} as `index.html`, and `proxy_next_upstream`.
 * Every other line is the shipped file's. Throws when one of these lines is no longer in the file.
 */
export function renderNginxConf(
  shipped: string,
  values: { ports: readonly number[]; listen: number; root: string; nextUpstream?: string },
): string {
  const replace = (text: string, from: RegExp, to: string): string => {
    if (!from.test(text)) throw new Error(`${NGINX_CONF}: no line matches ${from}`);
    return text.replace(from, to);
  };
  let conf = replace(
    shipped,
    /^(\s*)server 10\.0\.0\.11:3000 (max_fails=0;[^\n]*)\n(\s*server 10\.0\.0\.\d+:3000[^\n]*\n)*/m,
    values.ports.map((p) => `$1server 127.0.0.1:${p} $2\n`).join(''),
  );
  conf = replace(conf, /^(\s*)listen 80;/m, `$1listen 127.0.0.1:${values.listen};`);
  conf = replace(conf, /^(\s*)root \/usr\/share\/nginx\/html;/m, `$1root ${values.root};`);
  conf = replace(conf, /^(\s*)proxy_next_upstream error timeout;/m, `$1proxy_next_upstream ${values.nextUpstream ?? 'error timeout'};`);
  return conf;
}

/**
 * nginx on a free loopback port running {@link NGINX_CONF}: `/api/` round-robin over `ports` with
 * keep-alive upstream connections, every other path the front end's page. A failed instance is never
 * taken out of rotation for long (`max_fails=0`: nginx's default `fail_timeout` of 10 s would hide a
 * restarted instance), a connection refused by a stopped instance is tried on the next one (nginx
 * never passes a POST on once it was sent), and `Host` keeps the port (the proxy's same-origin check
 * compares it with `Origin`).
 */
export async function startNginx(ports: readonly number[], options: NginxOptions = {}): Promise<TestNginx> {
  if (!NGINX) throw new Error('nginx is not installed');
  const dir = mkdtempSync(join(tmpdir(), 'front-proxy-nginx-'));
  for (const sub of ['body', 'proxy', 'fastcgi', 'uwsgi', 'scgi', 'html']) mkdirSync(join(dir, sub));
  writeFileSync(join(dir, 'html', 'index.html'), FRONT_END_PAGE);
  const port = await freePort();
  const isRoot = process.getuid?.() === 0;
  const site = renderNginxConf(readFileSync(NGINX_CONF, 'utf8'), {
    ports,
    listen: port,
    root: join(dir, 'html'),
    nextUpstream: options.nextUpstream,
  });
  writeFileSync(
    join(dir, 'nginx.conf'),
    `${isRoot ? 'user root;\n' : ''}worker_processes 1;
error_log ${join(dir, 'error.log')} warn;
pid ${join(dir, 'nginx.pid')};
events { worker_connections 512; }
http {
  log_format upstreams '$request_method $status "$upstream_addr" "$upstream_status"';
  access_log ${options.accessLog ? `${join(dir, 'access.log')} upstreams` : 'off'};
  client_body_temp_path ${join(dir, 'body')};
  proxy_temp_path ${join(dir, 'proxy')};
  fastcgi_temp_path ${join(dir, 'fastcgi')};
  uwsgi_temp_path ${join(dir, 'uwsgi')};
  scgi_temp_path ${join(dir, 'scgi')};
${site}
}
`,
  );
  const proc = spawn(NGINX, ['-p', dir, '-c', join(dir, 'nginx.conf'), '-g', 'daemon off;'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let errors = '';
  proc.stderr?.on('data', (c: Buffer) => (errors += c.toString('utf8')));
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`nginx exited with ${proc.exitCode}: ${errors}`);
    try {
      await fetch(`http://127.0.0.1:${port}/api/version`);
      break;
    } catch {
      if (Date.now() > deadline) throw new Error(`nginx did not listen: ${errors}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  return {
    url: `http://127.0.0.1:${port}`,
    accessLog: options.accessLog ? join(dir, 'access.log') : undefined,
    async stop() {
      if (proc.exitCode === null) {
        await new Promise<void>((resolve) => {
          proc.once('exit', () => resolve());
          proc.kill('SIGTERM');
        });
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
