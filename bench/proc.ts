/**
 * Process measurements for the benchmark, read from Linux `/proc`: CPU time (`utime + stime` of
 * `/proc/<pid>/stat`), resident memory (`VmRSS` of `/proc/<pid>/status`), the process tree (a
 * cluster primary and its workers), and CPU pinning with `taskset`. Elsewhere the readers answer
 * zero and pinning is skipped.
 *
 * @module
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

let clockTicks: number | undefined;

/** Clock ticks per second of `/proc/<pid>/stat` times (`getconf CLK_TCK`, usually 100). */
export function ticksPerSecond(): number {
  if (clockTicks === undefined) {
    try {
      clockTicks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      clockTicks = 100;
    }
  }
  return clockTicks;
}

function statFields(pid: number): string[] | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: fields start after the last ')'.
    return text.slice(text.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/** `pid` and every descendant of it that is alive now. */
export function processTree(pid: number): number[] {
  const parents = new Map<number, number[]>();
  let entries: string[] = [];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [pid];
  }
  for (const entry of entries) {
    const child = Number(entry);
    if (!Number.isInteger(child) || child <= 0) continue;
    const fields = statFields(child);
    const parent = fields ? Number(fields[1]) : Number.NaN; // field 4: ppid
    if (!Number.isInteger(parent)) continue;
    const list = parents.get(parent) ?? [];
    list.push(child);
    parents.set(parent, list);
  }
  const out: number[] = [];
  const walk = (p: number) => {
    out.push(p);
    for (const c of parents.get(p) ?? []) walk(c);
  };
  walk(pid);
  return out;
}

/** CPU time used so far by the processes (user + system), in microseconds. */
export function cpuMicros(pids: readonly number[]): number {
  let ticks = 0;
  for (const pid of pids) {
    const fields = statFields(pid);
    if (!fields) continue;
    ticks += Number(fields[11]) + Number(fields[12]); // fields 14 and 15: utime, stime
  }
  return (ticks * 1e6) / ticksPerSecond();
}

/**
 * CPU time (user + system) of this process's children that have ended and been waited for, in
 * microseconds (`cutime + cstime` of `/proc/self/stat`): a child's whole CPU time once it has exited.
 */
export function childrenCpuMicros(): number {
  const fields = statFields(process.pid);
  if (!fields) return 0;
  return ((Number(fields[13]) + Number(fields[14])) * 1e6) / ticksPerSecond(); // fields 16 and 17: cutime, cstime
}

/** Resident memory of the processes now, in bytes. */
export function rssBytes(pids: readonly number[]): number {
  let total = 0;
  for (const pid of pids) {
    try {
      const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      if (match) total += Number(match[1]) * 1024;
    } catch {
      // gone
    }
  }
  return total;
}

let tasksetPresent: boolean | undefined;

/** True when `taskset` can be run here. */
export function hasTaskset(): boolean {
  if (tasksetPresent === undefined) {
    tasksetPresent = spawnSync('taskset', ['-p', String(process.pid)], { stdio: 'ignore' }).status === 0;
  }
  return tasksetPresent;
}

/** Sets the CPU affinity of every thread of a running process (`taskset -a -p -c <cpus> <pid>`). */
export function pin(pid: number, cpus: string): boolean {
  if (!hasTaskset()) return false;
  return spawnSync('taskset', ['-a', '-p', '-c', cpus, String(pid)], { stdio: 'ignore' }).status === 0;
}

/** A command line with `taskset -c <cpus>` in front when `cpus` is given and taskset exists. */
export function pinnedCommand(cpus: string | undefined, command: string, args: readonly string[]): [string, string[]] {
  if (cpus !== undefined && hasTaskset()) return ['taskset', ['-c', cpus, command, ...args]];
  return [command, [...args]];
}
