/**
 * docs/behaviour.md "Resilience", "Client gone": the routes' `ClientDeparture`, the cancellation of a
 * read's upstream calls, behaves as the `AbortSignal` it replaces for what the upstream calls use of
 * it: `aborted`, and `abort` listeners called once, in order, only when the answer's connection closes
 * before the answer was written whole. Over sockets, the cut of upstream calls whose clients left is
 * tested in client-faults.test.ts and hardening/upstream-faults.test.ts.
 */
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { test } from 'node:test';
import { ClientDeparture } from '../src/routes/context.js';

/** A response that closes when told, its answer written whole or not. */
function response(): { res: ServerResponse; close: (finished: boolean) => void } {
  const emitter = new EventEmitter() as EventEmitter & { writableFinished: boolean };
  emitter.writableFinished = false;
  return {
    res: emitter as unknown as ServerResponse,
    close: (finished) => {
      emitter.writableFinished = finished;
      emitter.emit('close');
    },
  };
}

test('ClientDeparture: aborted and its listeners called when, and only when, the client leaves before the whole answer', () => {
  const rows: [name: string, gone: boolean, finished: boolean | undefined, aborted: boolean, calls: string[]][] = [
    ['left before the answer', false, false, true, ['a', 'b']],
    ['the answer written whole, then closed', false, true, false, []],
    ['still open', false, undefined, false, []],
    ['already gone when made', true, undefined, true, []],
  ];
  for (const [name, gone, finished, aborted, calls] of rows) {
    const { res, close } = response();
    const departure = new ClientDeparture(res, gone);
    const called: string[] = [];
    const a = () => called.push('a');
    const b = () => called.push('b');
    const removed = () => called.push('removed');
    departure.addEventListener('abort', a, { once: true });
    departure.addEventListener('abort', b, { once: true });
    departure.addEventListener('abort', a, { once: true });
    departure.addEventListener('abort', removed, { once: true });
    departure.removeEventListener('abort', removed);
    if (finished !== undefined) close(finished);
    assert.equal(departure.aborted, aborted, name);
    assert.deepEqual(called, calls, name);
    if (finished !== undefined) close(finished);
    assert.deepEqual(called, calls, `${name}: each listener called once`);
    const late: string[] = [];
    departure.addEventListener('abort', () => late.push('late'));
    assert.deepEqual(late, [], `${name}: a listener added later is never called, as an AbortSignal's`);
  }
});

test('ClientDeparture: one close listener on the response, none when made for a client already gone', () => {
  const open = response();
  new ClientDeparture(open.res, false);
  assert.equal((open.res as unknown as EventEmitter).listenerCount('close'), 1);
  const gone = response();
  new ClientDeparture(gone.res, true);
  assert.equal((gone.res as unknown as EventEmitter).listenerCount('close'), 0);
});
