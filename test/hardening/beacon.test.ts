/**
 * Hardening row 12, the forced-logout beacon (spec 6; docs/behaviour.md "Rate limits and client address":
 * the beacon accepts only the fields of spec 6, 4 KB at most). `POST /api/logs/auth-logout` needs no
 * session and writes a warning, so it is the cheapest way to write into the log: valid beacons, each
 * field with each wrong type, unknown fields (log-looking names included), and bodies around the 4 KB
 * limit up to 1 MiB, every one sampled in (`random` = 0).
 *
 * Pass: a valid beacon answers 204; a wrong type or an unknown field 400 `invalid_request`; a body over
 * 4,096 bytes 413 `payload_too_large`; nothing upstream; every `forced-logout` log entry holds exactly
 * the eleven fields of spec 6.1 and nothing of the refused bodies reaches the log.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { jsonOf, keepAliveAgent, rawRequest, runPool } from './helpers/client.js';
import { Figures } from './helpers/figures.js';
import { type Harness, startHarness } from './helpers/harness.js';

const figures = new Figures('beacon', 12, 'Forced-logout beacon');
const agent = keepAliveAgent(4);
const PATH = '/api/logs/auth-logout';
const LIMIT = 4 * 1024;
const FIELDS = [
  'ref',
  'endpointCode',
  'errorCode',
  'status',
  'reason',
  'url',
  'initiator',
  'pathname',
  'timestamp',
  'hadCookie',
  'userAgentShort',
];
const MARK = 'zz-refused-marker';
let h: Harness;

before(async () => {
  h = await startHarness({}, {}, { random: () => 0 });
});
after(async () => {
  agent.destroy();
  await h.close();
  figures.write();
});

function valid(): Record<string, unknown> {
  return {
    ref: 'EP0003-EM0003',
    endpointCode: 'EP0003',
    errorCode: 'EM0003',
    status: 401,
    reason: 'token expired',
    url: '/api/auth/profile',
    initiator: 'proxy-client',
    pathname: '/casino',
    timestamp: 1_780_000_000_000,
    hadCookie: true,
    userAgentShort: 'Chrome 140 / Linux',
  };
}

/** A valid beacon of exactly `bytes` bytes of JSON (padded in `url` and `pathname`). */
function validOfSize(bytes: number): Buffer {
  const beacon = valid();
  const base = Buffer.byteLength(JSON.stringify(beacon));
  const pad = bytes - base;
  const url = Math.min(2048 - String(beacon.url).length, pad);
  beacon.url = `${String(beacon.url)}${'u'.repeat(url)}`;
  beacon.pathname = `${String(beacon.pathname)}${'p'.repeat(pad - url)}`;
  const out = Buffer.from(JSON.stringify(beacon));
  assert.equal(out.length, bytes);
  return out;
}

const WRONG: readonly unknown[] = [null, 12, 'x', true, [], {}, 1.5, -1];

function typeOk(field: string, value: unknown): boolean {
  const sample = valid()[field];
  if (field === 'status' || field === 'timestamp') return Number.isInteger(value) && (value as number) >= 0;
  return typeof value === typeof sample && value !== null && !Array.isArray(value);
}

interface Case {
  name: string;
  body: Buffer;
  expect: number;
  error?: string;
}

function cases(): Case[] {
  const out: Case[] = [{ name: 'valid', body: Buffer.from(JSON.stringify(valid())), expect: 204 }];
  for (const field of FIELDS) {
    for (const value of WRONG) {
      if (typeOk(field, value)) continue;
      out.push({
        name: `${field}=${JSON.stringify(value)}`,
        body: Buffer.from(JSON.stringify({ ...valid(), [field]: value })),
        expect: 400,
        error: 'invalid_request',
      });
    }
    const missing = valid();
    delete missing[field];
    out.push({ name: `without ${field}`, body: Buffer.from(JSON.stringify(missing)), expect: 400, error: 'invalid_request' });
  }
  for (const extra of ['extra', 'msg', 'level', 'time', 'req', 'event', 'beacon', 'password', 'x'.repeat(200), 'err']) {
    out.push({
      name: `unknown field ${extra.slice(0, 20)}`,
      body: Buffer.from(JSON.stringify({ ...valid(), [extra]: MARK })),
      expect: 400,
      error: 'invalid_request',
    });
  }
  out.push({
    name: 'nested unknown',
    body: Buffer.from(JSON.stringify({ ...valid(), extra: { deep: MARK.repeat(100) } })),
    expect: 400,
    error: 'invalid_request',
  });
  out.push({ name: 'array body', body: Buffer.from(JSON.stringify([valid()])), expect: 400, error: 'invalid_request' });
  out.push({ name: `exactly ${LIMIT} bytes`, body: validOfSize(LIMIT), expect: 204 });
  out.push({ name: `${LIMIT + 1} bytes`, body: validOfSize(LIMIT + 1), expect: 413, error: 'payload_too_large' });
  for (const size of [8 * 1024, 16 * 1024, 64 * 1024, 1024 * 1024]) {
    out.push({
      name: `${size} bytes with an unknown field`,
      body: Buffer.from(JSON.stringify({ ...valid(), extra: MARK.padEnd(size, 'y') })),
      expect: 413,
      error: 'payload_too_large',
    });
  }
  return out;
}

test('row 12: the beacon takes the fields of spec 6.1 only, 4 KB at most, and logs nothing else', async () => {
  await figures.run('beacon', async () => {
    const list = cases();
    const before = h.proxy.logs.lines.length;
    const accepted: string[] = [];
    await runPool(
      list.map((c, i) => async () => {
        const rid = `beacon-${i}`;
        const res = await rawRequest(h.base, {
          method: 'POST',
          path: PATH,
          headers: { 'content-type': 'application/json', 'x-request-id': rid },
          body: c.body,
          agent,
        });
        figures.inputs++;
        figures.status(res.status || res.error || 'no answer');
        const calls = h.upstream.byRid.get(rid)?.length ?? 0;
        if (c.expect >= 400) figures.upstreamCallsForRejected += calls;
        figures.check(calls === 0, `${c.name}: ${calls} upstream call(s)`);
        figures.check(res.status === c.expect, `${c.name} (${c.body.length} bytes): ${res.status}, expected ${c.expect}`);
        if (c.error) {
          const error = (jsonOf(res.body) as { error?: unknown } | undefined)?.error;
          figures.check(error === c.error, `${c.name}: error ${String(error)}, expected ${c.error}`);
        } else {
          accepted.push(rid);
        }
      }),
      4,
    );
    // The log: one entry per accepted beacon, the eleven fields and nothing else.
    const lines = h.proxy.logs.lines.slice(before);
    const entries = lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((e) => e.msg === 'forced-logout');
    figures.check(entries.length === accepted.length, `${entries.length} forced-logout entries for ${accepted.length} accepted beacons`);
    let largest = 0;
    for (const entry of entries) {
      const keys = Object.keys((entry.beacon ?? {}) as object).sort();
      figures.check(JSON.stringify(keys) === JSON.stringify([...FIELDS].sort()), `logged beacon fields: ${keys.join(', ')}`);
      const line = JSON.stringify(entry);
      largest = Math.max(largest, Buffer.byteLength(line));
      figures.check(entry.level === 'warn', `level ${String(entry.level)}`);
    }
    const leaked = lines.filter((l) => l.includes(MARK)).length;
    figures.canaryOccurrences += leaked;
    figures.check(leaked === 0, `${leaked} log line(s) carry a refused field`);
    figures.check(h.crashes.length === 0, `uncaught errors: ${h.crashes.join('; ')}`);
    figures.note(
      `${list.length} bodies: ${accepted.length} accepted, ${list.length - accepted.length} refused; ${entries.length} forced-logout entries, ` +
        `largest ${largest} bytes; the refused bodies' marker in the log: ${leaked} times (counted as canary occurrences)`,
    );
  });
  assert.equal(figures.failureCount, 0, figures.summary());
});
