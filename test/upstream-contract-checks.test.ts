// The live contract checks' own bounds and rules (src/pipeline/upstream-contract.ts), with a fake log,
// report, random draw and clock: what is sampled, the bounded queue, the checks off the call's path,
// one count per answer and kind, and the once-a-minute log from a bounded memory.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type ContractCheckLimits, joinObservers, UpstreamContractChecks } from '../src/pipeline/upstream-contract.js';
import type { UpstreamCallRecord } from '../src/upstream/client.js';
import { sampleProfile } from './helpers/doctor-samples.js';

const { user, userInfo } = sampleProfile(7);
const PROFILE = Buffer.from(JSON.stringify({ user, userInfo }));
const DRIFTED = Buffer.from(JSON.stringify({ user: { ...user, id: 'secret-value' }, userInfo }));

function call(over: Partial<UpstreamCallRecord> = {}): UpstreamCallRecord {
  return {
    service: 'BFF_BASE_URL',
    prefix: '',
    method: 'GET',
    path: '/auth/user-profile',
    endpoint: 'EP0003',
    status: 200,
    error: undefined,
    body: PROFILE,
    seconds: 0.01,
    ...over,
  };
}

function harness(sample = 1, limits: Partial<ContractCheckLimits> = {}, draws: number[] = []) {
  const counted: string[] = [];
  const logged: { level: string; fields: Record<string, unknown>; message: string }[] = [];
  let now = 0;
  const checks = new UpstreamContractChecks({
    sample,
    limits,
    random: () => draws.shift() ?? 0,
    now: () => now,
    report: { contractChecked: (e) => counted.push(`checked ${e}`), contractFinding: (e, k) => counted.push(`${k} ${e}`) },
    log: {
      warn: (fields, message) => logged.push({ level: 'warn', fields, message }),
      info: (fields, message) => logged.push({ level: 'info', fields, message }),
    },
  });
  return { checks, counted, logged, tick: (ms: number) => (now += ms) };
}

describe('what is checked', () => {
  const rows: [name: string, record: Partial<UpstreamCallRecord>, counted: string[]][] = [
    ['a conforming BFF answer: one check, no finding', {}, ['checked EP0003']],
    ['a drifted one: one check, one type finding', { body: DRIFTED }, ['checked EP0003', 'type EP0003']],
    [
      'an HTML page on a JSON endpoint: not_json',
      { path: '/users/wallet', endpoint: 'EP0034', body: Buffer.from('<html>') },
      ['checked EP0034', 'not_json EP0034'],
    ],
    ['an empty profile (the proxy needs the body): not_json', { body: Buffer.alloc(0) }, ['checked EP0003', 'not_json EP0003']],
    ['an empty answer elsewhere: not checked', { path: '/users/wallet', endpoint: 'EP0034', body: Buffer.from(' \n') }, []],
    ['another service: not checked', { service: 'STICKER_API_URL' }, []],
    ['an answer outside 2xx: not checked', { status: 404, body: DRIFTED }, []],
    ['a streamed answer (no body): not checked', { body: undefined }, []],
    ['a path of no EP code: not checked', { path: '/nothing/here', endpoint: 'EP0000' }, []],
    [
      "the EP code is the call record's (the client found it with the base URL prefix), never the path's again",
      { prefix: '/v9', path: '/nothing/here', endpoint: 'EP0003' },
      ['checked EP0003'],
    ],
    [
      'an endpoint without a shape: any JSON',
      { path: '/bff/users/bank-list', endpoint: 'EP0094', body: Buffer.from('[{"x":1}]') },
      ['checked EP0094'],
    ],
  ];
  for (const [name, record, want] of rows) {
    test(name, () => {
      const h = harness();
      h.checks.observe(call(record));
      h.checks.flush();
      assert.deepEqual(h.counted, want);
    });
  }
});

test('off the call path: the observer only queues; the check comes in a later turn of the event loop', async () => {
  const h = harness();
  h.checks.observe(call({ body: DRIFTED }));
  assert.deepEqual(h.counted, [], 'nothing checked synchronously');
  assert.equal(h.checks.waiting, 1);
  await new Promise((resolve) => setImmediate(resolve));
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(h.counted, ['checked EP0003', 'type EP0003']);
  assert.equal(h.checks.waiting, 0);
});

test('the sample: an answer is checked when the draw is under the share', () => {
  const h = harness(0.01, {}, [0.5, 0.0099, 0.01, 0.999]);
  for (let i = 0; i < 4; i++) h.checks.observe(call());
  h.checks.flush();
  assert.deepEqual(h.counted, ['checked EP0003']);
});

test('the queue is bounded by entries and bytes: a full queue drops the answer and counts nothing for it', () => {
  const byEntries = harness(1, { queueEntries: 2 });
  for (let i = 0; i < 5; i++) byEntries.checks.observe(call({ body: DRIFTED }));
  assert.equal(byEntries.checks.dropped, 3);
  byEntries.checks.flush();
  assert.equal(byEntries.counted.filter((c) => c.startsWith('checked')).length, 2);
  const byBytes = harness(1, { queueBytes: PROFILE.length * 2 + 1 });
  for (let i = 0; i < 3; i++) byBytes.checks.observe(call());
  assert.deepEqual([byBytes.checks.waiting, byBytes.checks.dropped], [2, 1]);
  byBytes.checks.close();
  assert.equal(byBytes.checks.waiting, 0, 'close drops what waits');
});

test('the log: once a minute per endpoint, path and kind; warn, info for extra; never a value', () => {
  const h = harness();
  const extra = Buffer.from(JSON.stringify({ user: { ...user, nickname: 'secret-value' }, userInfo }));
  for (let i = 0; i < 3; i++) h.checks.observe(call({ body: DRIFTED }));
  h.checks.observe(call({ body: extra }));
  h.checks.flush();
  assert.deepEqual(
    h.logged.map((l) => [l.level, l.fields.endpoint, l.fields.path, l.fields.kind, l.message]),
    [
      ['warn', 'EP0003', 'user.id', 'type', 'upstream contract: EP0003 user.id: expected number, got string'],
      ['info', 'EP0003', 'user.*', 'extra', 'upstream contract: EP0003 user.*: a field the specification does not name (kept as it is)'],
    ],
  );
  assert.equal(h.logged[0]?.fields.event, 'upstream-contract');
  assert.ok(!JSON.stringify(h.logged).includes('secret-value'));
  assert.equal(h.counted.filter((c) => c === 'type EP0003').length, 3, 'every answer counted, logged once');
  h.tick(59_999);
  h.checks.observe(call({ body: DRIFTED }));
  h.checks.flush();
  assert.equal(h.logged.length, 2, 'still within the minute');
  h.tick(1);
  h.checks.observe(call({ body: DRIFTED }));
  h.checks.flush();
  assert.equal(h.logged.length, 3, 'a minute later, once more');
});

test("the log's memory is bounded: a new key waits while every key is younger than a minute", () => {
  const h = harness(1, { logKeys: 2 });
  const drift = (field: string) => Buffer.from(JSON.stringify({ user: { ...user, [field]: 1 }, userInfo }));
  h.checks.observe(call({ body: drift('email') }));
  h.checks.observe(call({ body: drift('name') }));
  h.checks.observe(call({ body: drift('phone') }));
  h.checks.flush();
  assert.deepEqual(
    h.logged.map((l) => l.fields.path),
    ['user.email', 'user.name'],
  );
  assert.equal(h.checks.unlogged, 1);
  h.tick(60_000);
  h.checks.observe(call({ body: drift('phone') }));
  h.checks.flush();
  assert.deepEqual(
    h.logged.map((l) => l.fields.path),
    ['user.email', 'user.name', 'user.phone'],
    'the oldest key forgotten once its minute is over',
  );
});

test('the sample must be above 0 and at most 1', () => {
  for (const sample of [0, -0.1, 1.5, Number.NaN]) assert.throws(() => harness(sample), RangeError);
});

test('joinObservers: each observer told, one failing does not keep the others from the call', () => {
  const seen: string[] = [];
  assert.equal(joinObservers(undefined, undefined), undefined);
  const one = () => seen.push('one');
  assert.equal(joinObservers(undefined, one), one);
  const both = joinObservers(() => {
    throw new Error('broken');
  }, one);
  both?.(call());
  assert.deepEqual(seen, ['one']);
});
