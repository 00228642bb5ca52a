/**
 * The request's logger (pipeline/logging.ts): built on first use, and a line below the level never
 * builds it (a debug line at `info` costs nothing per request).
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, test } from 'node:test';
import type { FastifyBaseLogger } from 'fastify';
import pino from 'pino';
import { AggregatedLine, createLogging, isoTimeBySecond } from '../src/pipeline/logging.js';
import { send, startProxy, startRecordingUpstream } from './helpers/recording-upstream.js';

function parentLogger(level: string) {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  const logger = pino({ level }, stream);
  let children = 0;
  const child = logger.child.bind(logger);
  logger.child = ((...args: Parameters<typeof child>) => {
    children++;
    return child(...args);
  }) as typeof logger.child;
  return { logger: logger as unknown as FastifyBaseLogger, lines, children: () => children };
}

const cases: { level: string; childLevel?: string; call: 'debug' | 'info' | 'error'; written: boolean }[] = [
  { level: 'info', call: 'debug', written: false },
  { level: 'info', call: 'info', written: true },
  { level: 'info', call: 'error', written: true },
  { level: 'debug', call: 'debug', written: true },
  { level: 'warn', call: 'info', written: false },
  { level: 'silent', call: 'error', written: false },
  { level: 'info', childLevel: 'debug', call: 'debug', written: true },
  { level: 'debug', childLevel: 'error', call: 'info', written: false },
];

for (const { level, childLevel, call, written } of cases) {
  test(`request logger at ${level}${childLevel ? ` (route level ${childLevel})` : ''}: ${call} ${written ? 'is written with reqId' : 'builds nothing'}`, async () => {
    const { options } = createLogging({ logLevel: 'info', production: false }, new Writable({ write: (_c, _e, d) => d() }), {
      terminal: false,
    });
    const parent = parentLogger(level);
    const factory = options.childLoggerFactory as unknown as (l: FastifyBaseLogger, b: object, o: object) => FastifyBaseLogger;
    const log = factory(parent.logger, { reqId: 'req-1' }, childLevel ? { level: childLevel } : {});
    log[call]({ detail: 1 }, 'a line');
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(parent.lines.length, written ? 1 : 0);
    assert.equal(parent.children(), written ? 1 : 0, 'the child is built only for a line that is written');
    if (written) assert.equal(parent.lines[0]?.reqId, 'req-1');
  });
}

describe('AggregatedLine: one warn line for events that come in bulk', () => {
  test('the first event is written at once; later ones are counted by key and written together', () => {
    const lines: { fields: Record<string, unknown>; msg: string }[] = [];
    const log = { warn: (fields: Record<string, unknown>, msg: string) => lines.push({ fields, msg }) } as unknown as FastifyBaseLogger;
    const line = new AggregatedLine(log, 'upstream calls refused since the last line', 'refused');
    line.count('EP0032-EM0032 upstream_busy');
    assert.deepEqual(lines, [
      { fields: { refused: { 'EP0032-EM0032 upstream_busy': 1 } }, msg: 'upstream calls refused since the last line' },
    ]);
    line.count('EP0032-EM0032 upstream_busy');
    line.count('EP0032-EM0032 upstream_busy');
    line.count('EP0033-EM0032 upstream_circuit_open');
    assert.equal(lines.length, 1, 'within the interval nothing more is written');
    line.flush();
    assert.deepEqual(lines[1]?.fields, { refused: { 'EP0032-EM0032 upstream_busy': 2, 'EP0033-EM0032 upstream_circuit_open': 1 } });
    line.flush();
    assert.equal(lines.length, 2, 'nothing counted, nothing written');
  });
});

describe("isoTimeBySecond: the lines' time, its second formatted once", () => {
  // Instants in the order a clock gives them, some within one second, some across seconds, days,
  // years and the epoch; and a clock that steps back.
  const instants = [
    -1_001, -1_000, -999, -1, 0, 1, 9, 10, 99, 100, 999, 1_000, 1_001, 1_738_324_799_999, 1_738_324_800_000, 1_738_324_800_007,
    1_738_324_800_042, 1_738_324_800_123, 1_738_324_801_000, 1_738_324_800_500, 1_709_164_800_000, 1_735_689_599_999, 1_735_689_600_000,
    253_402_300_799_999, 253_402_300_800_000, 8_640_000_000_000_000, -8_640_000_000_000_000,
  ];
  test('the same text as pino.stdTimeFunctions.isoTime at each instant', () => {
    let clock = 0;
    const time = isoTimeBySecond(() => clock);
    for (const instant of instants) {
      clock = instant;
      assert.equal(time(), `,"time":"${new Date(instant).toISOString()}"`, String(instant));
    }
  });
  test('by default reads Date.now()', () => {
    const before = Date.now();
    const text = isoTimeBySecond()();
    const read = Date.parse(text.slice(9, -1));
    assert.ok(read >= before && read <= Date.now(), text);
    assert.match(text, /^,"time":"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z"$/);
  });
});

describe("the completion line's level, over sockets (LOG_LEVEL=debug)", () => {
  for (const omitSteps of [[], ['request-context']] as const) {
    test(`a probe's at debug, a route's and a not-found's at info${omitSteps.length ? ' (the request context step left out)' : ''}`, async () => {
      const upstream = await startRecordingUpstream();
      const proxy = await startProxy(upstream.url, { LOG_LEVEL: 'debug' }, { omitSteps: new Set(omitSteps) });
      try {
        const asked = ['/healthz', '/api/nothing-here', '/api/catalogue/games-categories'];
        for (const path of asked) await send(proxy.url, 'GET', path);
        const completed = proxy.logs.entries.filter((e) => e.msg === 'request completed');
        assert.deepEqual(
          asked.map((path) => completed.find((e) => e.url === path)?.level),
          ['debug', 'info', 'info'],
        );
      } finally {
        await proxy.close();
        await upstream.close();
      }
    });
  }
});
