/**
 * Real processes for the fleet tests: proxy instances started as `npm start` starts them (`node` with
 * package.json's options on `dist/server.js`, built by `npm test`), each on its own loopback port so
 * that a restarted instance comes back where it was; and a real `nginx` (Debian's; `.ci/run` installs
 * it) round-robining over them with keep-alive upstream connections. Everything is stopped by PID.
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

/**
 * nginx on a free loopback port, round-robin over `ports` with keep-alive upstream connections. A
 * failed instance is never taken out of rotation for long (`max_fails=0`: nginx's default
 * `fail_timeout` of 10 s would hide a restarted instance), a connection refused by a stopped instance
 * is tried on the next one (nginx never passes a POST on once it was sent), and `Host` keeps the port
 * (the proxy's same-origin check compares it with `Origin`).
 */
export async function startNginx(ports: readonly number[], options: NginxOptions = {}): Promise<TestNginx> {
  if (!NGINX) throw new Error('nginx is not installed');
  const dir = mkdtempSync(join(tmpdir(), 'front-proxy-nginx-'));
  for (const sub of ['body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) mkdirSync(join(dir, sub));
  const port = await freePort();
  const isRoot = process.getuid?.() === 0;
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
  upstream proxies {
${ports.map((p) => `    server 127.0.0.1:${p} max_fails=0;`).join('\n')}
    keepalive 16;
  }
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass http://proxies;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $http_host;
      proxy_next_upstream ${options.nextUpstream ?? 'error timeout'};
      proxy_connect_timeout 2s;
    }
  }
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
      await fetch(`http://127.0.0.1:${port}/healthz`);
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
