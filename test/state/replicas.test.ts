// docs/behaviour.md "Several instances": which replicas must acknowledge a money move's record, table by table.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { acknowledgement, parseReplicationInfo, promotableFromSentinel, type ReplicaOffset } from '../../src/state/replicas.js';

const INFO = [
  '# Replication',
  'role:master',
  'connected_slaves:2',
  'slave0:ip=127.0.0.1,port=7001,state=online,offset=1200,lag=0',
  'slave1:ip=127.0.0.1,port=7002,state=online,offset=900,lag=3',
  'master_failover_state:no-failover',
  'master_repl_offset:1200',
  '',
].join('\r\n');

describe("the primary's INFO replication", () => {
  test("names its role, its offset and each replica's acknowledged offset", () => {
    assert.deepEqual(parseReplicationInfo(INFO), {
      role: 'master',
      offset: 1200,
      replicas: [
        { address: '127.0.0.1:7001', offset: 1200 },
        { address: '127.0.0.1:7002', offset: 900 },
      ],
    });
  });
  test("a replica's text, or none at all", () => {
    assert.deepEqual(parseReplicationInfo('role:slave\nmaster_host:127.0.0.1\nmaster_repl_offset:77\n'), {
      role: 'slave',
      offset: 77,
      replicas: [],
    });
    assert.deepEqual(parseReplicationInfo(''), { role: 'unknown', offset: -1, replicas: [] });
  });
});

describe('acknowledged by every promotable replica, and by the floor', () => {
  const replicas: ReplicaOffset[] = [
    { address: 'a:1', offset: 1200 },
    { address: 'b:1', offset: 900 },
    { address: 'c:1', offset: 1300 },
  ];
  const rows: { name: string; promotable: string[]; floor: number; ok: boolean; missing?: string[] }[] = [
    { name: 'both promotable replicas past the write', promotable: ['a:1', 'c:1'], floor: 0, ok: true },
    {
      name: 'a promotable replica lagging (any N of them would have passed)',
      promotable: ['a:1', 'b:1'],
      floor: 1,
      ok: false,
      missing: ['b:1'],
    },
    { name: 'a promotable replica the primary does not list', promotable: ['a:1', 'd:1'], floor: 0, ok: false, missing: ['d:1'] },
    { name: 'no promotable replica left, auto', promotable: [], floor: 0, ok: true },
    { name: 'no promotable replica left, a floor of 2 met by any two', promotable: [], floor: 2, ok: true },
    { name: 'a floor of 3 with two replicas past the write', promotable: ['a:1'], floor: 3, ok: false, missing: [] },
  ];
  for (const row of rows) {
    test(row.name, () => {
      const verdict = acknowledgement(1200, replicas, row.promotable, row.floor);
      assert.equal(verdict.ok, row.ok);
      assert.equal(verdict.acknowledged, 2);
      if (row.missing) assert.deepEqual(verdict.missing, row.missing);
    });
  }
  test('an unknown write offset is never acknowledged', () => {
    assert.equal(acknowledgement(-1, replicas, ['a:1'], 0).ok, false);
  });
});

describe("the sentinels' promotable replicas", () => {
  const replica = (port: number, flags: string, priority: string) => [
    'name',
    `127.0.0.1:${port}`,
    'ip',
    '127.0.0.1',
    'port',
    String(port),
    'flags',
    flags,
    'slave-priority',
    priority,
  ];
  test('leaves out the replicas seen down and those of priority 0', () => {
    const reply = [
      replica(7001, 'slave', '100'),
      replica(7002, 'slave,s_down', '100'),
      replica(7003, 'slave,o_down,disconnected', '100'),
      replica(7004, 'slave,disconnected', '100'),
      replica(7005, 'slave', '0'),
      replica(7006, 'slave', '10'),
    ];
    assert.deepEqual(promotableFromSentinel(reply), ['127.0.0.1:7001', '127.0.0.1:7006']);
  });
  test('anything else is no replica', () => {
    assert.deepEqual(promotableFromSentinel(null), []);
    assert.deepEqual(promotableFromSentinel(['x', ['ip', '1.2.3.4']]), []);
  });
});
