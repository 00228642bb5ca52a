// docs/behaviour.md "Configuration" (REDIS_URL, REDIS_SENTINELS, REDIS_SENTINEL_NAME, REDIS_CLUSTER_NODES)
// and "Several instances": which Redis deployment the variables name, table by table; every bad
// combination is one line naming the variables, through loadConfig as the start reads it.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { loadConfig, type RedisTopology, type RedisVariables, redisTopology } from '../src/config.js';
import { problemsOf } from './helpers/config-problems.js';
import { reconnectOnReadonly } from '../src/state/redis.js';

describe('Redis topology from the environment', () => {
  const accepted: { env: RedisVariables; topology: RedisTopology | undefined }[] = [
    { env: {}, topology: undefined },
    {
      env: { REDIS_URL: 'redis://:pw@redis.internal:6379/0' },
      topology: { mode: 'standalone', url: 'redis://:pw@redis.internal:6379/0', minReplicasAck: 0 },
    },
    {
      env: { REDIS_URL: 'redis://redis.internal', REDIS_MIN_REPLICAS_ACK: '1' },
      topology: { mode: 'standalone', url: 'redis://redis.internal', minReplicasAck: 1 },
    },
    {
      env: { REDIS_SENTINELS: 'sentinel-0.redis:26379, sentinel-1.redis,[::1]:26380', REDIS_SENTINEL_NAME: 'mymaster' },
      topology: {
        mode: 'sentinel',
        sentinels: [
          { host: 'sentinel-0.redis', port: 26379 },
          { host: 'sentinel-1.redis', port: 26379 },
          { host: '::1', port: 26380 },
        ],
        name: 'mymaster',
        password: undefined,
        sentinelPassword: undefined,
        tls: false,
        minReplicasAck: 'auto',
      },
    },
    {
      env: {
        REDIS_SENTINELS: '10.0.0.1:26379',
        REDIS_SENTINEL_NAME: 'm',
        REDIS_PASSWORD: 'p1',
        REDIS_SENTINEL_PASSWORD: 'p2',
        REDIS_TLS: 'true',
      },
      topology: {
        mode: 'sentinel',
        sentinels: [{ host: '10.0.0.1', port: 26379 }],
        name: 'm',
        password: 'p1',
        sentinelPassword: 'p2',
        tls: true,
        minReplicasAck: 'auto',
      },
    },
    {
      env: { REDIS_SENTINELS: '10.0.0.1:26379', REDIS_SENTINEL_NAME: 'm', REDIS_MIN_REPLICAS_ACK: '2' },
      topology: {
        mode: 'sentinel',
        sentinels: [{ host: '10.0.0.1', port: 26379 }],
        name: 'm',
        password: undefined,
        sentinelPassword: undefined,
        tls: false,
        minReplicasAck: 2,
      },
    },
    {
      env: { REDIS_CLUSTER_NODES: 'redis-0', REDIS_MIN_REPLICAS_ACK: '0' },
      topology: { mode: 'cluster', nodes: [{ host: 'redis-0', port: 6379 }], password: undefined, tls: false, minReplicasAck: 0 },
    },
    {
      env: { REDIS_CLUSTER_NODES: 'redis-0:7000,redis-1', REDIS_PASSWORD: 'p', REDIS_TLS: 'false' },
      topology: {
        mode: 'cluster',
        nodes: [
          { host: 'redis-0', port: 7000 },
          { host: 'redis-1', port: 6379 },
        ],
        password: 'p',
        tls: false,
        minReplicasAck: 'auto',
      },
    },
    {
      env: { REDIS_CLUSTER_NODES: 'redis-0', REDIS_MIN_REPLICAS_ACK: 'auto' },
      topology: { mode: 'cluster', nodes: [{ host: 'redis-0', port: 6379 }], password: undefined, tls: false, minReplicasAck: 'auto' },
    },
  ];
  for (const { env, topology } of accepted) {
    test(`accepted: ${JSON.stringify(env)}`, () => {
      const problems: string[] = [];
      assert.deepEqual(redisTopology(env, problems), topology);
      assert.deepEqual(problems, []);
      assert.deepEqual(loadConfig(env as Record<string, string>).redis, topology);
    });
  }

  const refused: [Record<string, string>, RegExp][] = [
    [
      { REDIS_URL: 'redis://a', REDIS_CLUSTER_NODES: 'b:1' },
      /^REDIS_URL, REDIS_SENTINELS, REDIS_CLUSTER_NODES: expected exactly one of them, got REDIS_URL and REDIS_CLUSTER_NODES$/,
    ],
    [
      { REDIS_SENTINELS: 'a:1', REDIS_SENTINEL_NAME: 'm', REDIS_CLUSTER_NODES: 'b:1' },
      /^REDIS_URL, REDIS_SENTINELS, REDIS_CLUSTER_NODES: expected exactly one of them, got REDIS_SENTINELS and REDIS_CLUSTER_NODES$/,
    ],
    [{ REDIS_SENTINELS: 'a:26379' }, /^REDIS_SENTINELS, REDIS_SENTINEL_NAME: expected REDIS_SENTINEL_NAME too/],
    [{ REDIS_SENTINEL_NAME: 'mymaster' }, /^REDIS_SENTINEL_NAME: needs REDIS_SENTINELS/],
    [{ REDIS_URL: 'redis://a', REDIS_SENTINEL_NAME: 'mymaster' }, /^REDIS_SENTINEL_NAME: needs REDIS_SENTINELS/],
    [
      { REDIS_URL: 'redis://a', REDIS_PASSWORD: 'hunter2-secret' },
      /^REDIS_PASSWORD: needs REDIS_SENTINELS or REDIS_CLUSTER_NODES \(with REDIS_URL, the URL holds the password/,
    ],
    [{ REDIS_TLS: 'true' }, /^REDIS_TLS: needs REDIS_SENTINELS or REDIS_CLUSTER_NODES/],
    [{ REDIS_CLUSTER_NODES: 'a:1', REDIS_SENTINEL_PASSWORD: 'x' }, /^REDIS_SENTINEL_PASSWORD: needs REDIS_SENTINELS$/],
    [{ REDIS_CLUSTER_NODES: 'a:1', REDIS_TLS: 'yes' }, /^REDIS_TLS: expected one of true \| false, got "yes"$/],
    [{ REDIS_CLUSTER_NODES: 'a:1,,b:2' }, /^REDIS_CLUSTER_NODES: expected comma-separated host:port addresses, such as .*, got ""$/],
    [{ REDIS_CLUSTER_NODES: 'redis://a:1' }, /^REDIS_CLUSTER_NODES: expected comma-separated host:port addresses, .*got "redis:\/\/a:1"$/],
    [{ REDIS_CLUSTER_NODES: 'a:1/0' }, /^REDIS_CLUSTER_NODES: expected comma-separated host:port addresses, .*got "a:1\/0"$/],
    [{ REDIS_CLUSTER_NODES: 'a:99999' }, /^REDIS_CLUSTER_NODES: expected comma-separated host:port addresses/],
    [
      { REDIS_SENTINELS: 'user:pw@a:26379', REDIS_SENTINEL_NAME: 'm' },
      /^REDIS_SENTINELS: expected comma-separated host:port addresses, .*got an address with credentials \(REDIS_PASSWORD and REDIS_SENTINEL_PASSWORD hold them\)$/,
    ],
    [{ WORKERS: '2' }, /^WORKERS: 2 processes need REDIS_URL \(or REDIS_SENTINELS, REDIS_CLUSTER_NODES\)/],
    [
      { REDIS_CLUSTER_NODES: 'a:1', REDIS_MIN_REPLICAS_ACK: 'one' },
      /^REDIS_MIN_REPLICAS_ACK: expected auto or a plain decimal integer from 0 to 16, got "one"$/,
    ],
    [
      { REDIS_CLUSTER_NODES: 'a:1', REDIS_MIN_REPLICAS_ACK: '17' },
      /^REDIS_MIN_REPLICAS_ACK: expected auto or a plain decimal integer from 0 to 16, got "17"$/,
    ],
    [
      { REDIS_URL: 'redis://a', REDIS_MIN_REPLICAS_ACK: '-1' },
      /^REDIS_MIN_REPLICAS_ACK: expected auto or a plain decimal integer from 0 to 16, got "-1"$/,
    ],
    [
      { REDIS_URL: 'redis://a', REDIS_MIN_REPLICAS_ACK: 'auto' },
      /^REDIS_MIN_REPLICAS_ACK: auto needs REDIS_SENTINELS or REDIS_CLUSTER_NODES/,
    ],
    [{ REDIS_CLUSTER_NODES: 'a:1', REDIS_MIN_REPLICAS_ACK: 'AUTO' }, /^REDIS_MIN_REPLICAS_ACK: expected auto or a plain decimal integer/],
    [{ REDIS_MIN_REPLICAS_ACK: '1' }, /^REDIS_MIN_REPLICAS_ACK: needs REDIS_URL, REDIS_SENTINELS or REDIS_CLUSTER_NODES/],
  ];
  for (const [env, expected] of refused) {
    test(`refused in one line: ${JSON.stringify(env)}`, () => {
      const problems = problemsOf(env);
      assert.equal(problems.length, 1, JSON.stringify(problems));
      assert.match(problems[0] ?? '', expected);
      for (const secret of ['hunter2', 'pw@']) assert.ok(!(problems[0] ?? '').includes(secret), `a secret echoed: ${problems[0]}`);
    });
  }

  test('several workers accept any of the three topologies', () => {
    assert.equal(loadConfig({ WORKERS: '2', REDIS_CLUSTER_NODES: 'a:1' }).workers, 2);
    assert.equal(loadConfig({ WORKERS: '2', REDIS_SENTINELS: 'a:1', REDIS_SENTINEL_NAME: 'm' }).workers, 2);
  });

  // redisTopology alone (as the failover row calls it with the raw environment) checks the text too.
  const raw: [string, RegExp | number | 'auto'][] = [
    ['auto', 'auto'],
    ['3', 3],
    ['16', 16],
    ['03', /^REDIS_MIN_REPLICAS_ACK: expected auto or a plain decimal integer from 0 to 16, got "03"$/],
    ['1.5', /^REDIS_MIN_REPLICAS_ACK: expected auto or a plain decimal integer from 0 to 16, got "1.5"$/],
    ['99', /^REDIS_MIN_REPLICAS_ACK: expected auto or a plain decimal integer from 0 to 16, got "99"$/],
  ];
  for (const [text, expected] of raw) {
    test(`redisTopology: REDIS_MIN_REPLICAS_ACK=${text}`, () => {
      const problems: string[] = [];
      const topology = redisTopology({ REDIS_CLUSTER_NODES: 'a:1', REDIS_MIN_REPLICAS_ACK: text }, problems);
      if (typeof expected !== 'object') {
        assert.deepEqual(problems, []);
        assert.equal(topology?.minReplicasAck, expected);
      } else {
        assert.equal(problems.length, 1, JSON.stringify(problems));
        assert.match(problems[0] ?? '', expected);
      }
    });
  }

  const errors: [string, boolean, false | 1 | 2][] = [
    ["READONLY You can't write against a read only replica.", true, 2],
    ["READONLY You can't write against a read only replica.", false, 1],
    ['LOADING Redis is loading the dataset in memory', true, 2],
    ['MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to no', false, 1],
    ['NOREPLICAS Not enough good replicas to write.', true, false],
    ['ERR READONLY is not at the start', true, false],
    ['ERR unknown command', false, false],
  ];
  for (const [message, resend, expected] of errors) {
    test(`${message.split(' ')[0]} (${resend ? 'commands' : 'lane'}): reconnect ${expected}`, () =>
      assert.equal(reconnectOnReadonly(new Error(message), resend), expected));
  }
});
