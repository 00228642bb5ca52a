/**
 * Hardening row 6, money moves are never repeated (src/routes/payments.ts "Money rules").
 *
 * 1. An upstream that receives a deposit or a withdrawal and then resets the connection (RST), closes
 *    it (FIN) or resets after the status line: exactly one upstream attempt per client request, on a
 *    fresh and on a reused keep-alive connection, and the client gets 502/504, never a retry.
 * 2. Double submit: the same body from the same session twice — concurrently, or back to back within
 *    the guard's window — reaches the upstream once, and the repeat gets the first one's answer
 *    (byte for byte). Controls: another session, or another amount, is a second money move.
 */
import assert from 'node:assert/strict';
import type { Socket } from 'node:net';
import { after, before, test } from 'node:test';
import { fakeJwt } from '../helpers/recording-upstream.js';
import { keepAliveAgent, rawRequest } from './helpers/client.js';
import { Figures, scaled } from './helpers/figures.js';
import { type Harness, startHarness } from './helpers/harness.js';
import { type Handler, PROFILE_USER_ID } from './helpers/upstream.js';

const figures = new Figures('money', 6, 'Money moves never repeated');
const ROUNDS = scaled(200, 12);
let h: Harness;
const agent = keepAliveAgent(4);

before(async () => {
  h = await startHarness({ UPSTREAM_TIMEOUT_MS: '2000' }, { keepBodies: true });
});
after(async () => {
  agent.destroy();
  await h.close();
  figures.write();
});

const MOVES = [
  {
    name: 'deposit',
    route: '/api/payments/deposit',
    upstream: '/wallet/add-credit',
    body: (amount: number) => ({ userId: PROFILE_USER_ID, creditAmount: amount, paymentMethod: 'pix', currency: 'BRL' }),
  },
  {
    name: 'withdraw',
    route: '/api/payments/withdraw',
    upstream: '/new-withdraws',
    body: (amount: number) => ({ amount, method: 'pix', currency: 'BRL', pix_key: 'a@b.c', pix_key_type: 'email' }),
  },
] as const;

const RESETS: Record<string, Handler> = {
  'RST after receiving': (_req, res) => (res.socket as Socket).resetAndDestroy(),
  'FIN after receiving': (_req, res) => (res.socket as Socket).end(),
  'RST after the status line': (_req, res) => {
    const socket = res.socket as Socket;
    socket.write('HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 40\r\n\r\n{"ok":');
    socket.resetAndDestroy();
  },
};

async function post(path: string, token: string, body: unknown, rid: string) {
  return rawRequest(h.base, {
    method: 'POST',
    path,
    headers: { cookie: h.cookie(token), 'content-type': 'application/json', 'x-request-id': rid },
    body: JSON.stringify(body),
    agent,
  });
}

function attempts(rid: string, path: string): number {
  return (h.upstream.byRid.get(rid) ?? []).filter((s) => s.method === 'POST' && s.path === path).length;
}

test('row 6: a money move whose connection breaks upstream is attempted exactly once', async () => {
  await figures.run('resets', async () => {
    const token = fakeJwt({ sub: String(PROFILE_USER_ID), role: 'money' });
    let amount = 1_000;
    let n = 0;
    let maxAttempts = 0;
    for (let round = 0; round < ROUNDS; round++) {
      for (const move of MOVES) {
        for (const [reset, handler] of Object.entries(RESETS)) {
          // every other round, a good call first leaves an idle keep-alive connection to reuse
          const reuse = round % 2 === 1;
          if (reuse) await rawRequest(h.base, { method: 'GET', path: '/api/auth/profile', headers: { cookie: h.cookie(token) }, agent });
          h.upstream.fault(move.upstream, handler);
          const rid = `money-${n++}`;
          const res = await post(move.route, token, move.body(amount++), rid);
          h.upstream.heal();
          figures.inputs++;
          figures.faults++;
          figures.status(res.status || res.error || 'no answer');
          const count = attempts(rid, move.upstream);
          maxAttempts = Math.max(maxAttempts, count);
          const label = `${move.name} [${reset}${reuse ? ', reused connection' : ''}]`;
          figures.check(count === 1, `${label}: ${count} upstream attempt(s)`);
          figures.check(res.status === 502 || res.status === 504, `${label}: answered ${res.status}`);
        }
      }
    }
    figures.note(`connection breaks: ${n}; most upstream attempts for one client request: ${maxAttempts}`);
  });
  assert.equal(figures.failureCount, 0, figures.summary());
});

test('row 6: a double submit reaches the upstream once and the repeat gets the first answer', async () => {
  await figures.run('double submit', async () => {
    let served = 0;
    const slow: Handler = (_req, res) => {
      const body = JSON.stringify({ ok: true, transaction_id: `tx-${++served}`, status: 'pending' });
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
        res.end(body);
      }, 150);
    };
    let amount = 50_000;
    let n = 0;
    for (let round = 0; round < Math.max(3, Math.ceil(ROUNDS / 4)); round++) {
      for (const move of MOVES) {
        h.upstream.fault(move.upstream, slow);
        const token = fakeJwt({ sub: String(PROFILE_USER_ID), round, move: move.name });
        const calls = () => h.upstream.seen.filter((s) => s.path === move.upstream && s.headers.authorization === `Bearer ${token}`);

        // concurrently: the same body twice (and a third time) from one session
        const body = move.body(amount++);
        const before = calls().length;
        const answers = await Promise.all([0, 1, 2].map(() => post(move.route, token, body, `dbl-${n++}`)));
        figures.inputs += 3;
        for (const a of answers) figures.status(a.status);
        figures.check(calls().length - before === 1, `${move.name} concurrent ×3: ${calls().length - before} upstream calls`);
        const first = answers[0]?.body.toString('utf8');
        figures.check(
          answers.every((a) => a.status === answers[0]?.status && a.body.toString('utf8') === first),
          `${move.name} concurrent: the repeats did not get the first answer`,
        );

        // back to back: the same body again, after the first answered
        const again = await post(move.route, token, body, `dbl-${n++}`);
        figures.inputs++;
        figures.status(again.status);
        figures.check(calls().length - before === 1, `${move.name} back to back: ${calls().length - before} upstream calls`);
        figures.check(
          again.status === answers[0]?.status && again.body.toString('utf8') === first,
          `${move.name} back to back: another answer`,
        );

        // controls: another amount from the same session, and the same body from another session
        const other = await post(move.route, token, move.body(amount++), `dbl-${n++}`);
        const otherSession = fakeJwt({ sub: String(PROFILE_USER_ID), round, other: true });
        const second = await post(move.route, otherSession, body, `dbl-${n++}`);
        figures.inputs += 2;
        figures.status(other.status);
        figures.status(second.status);
        figures.check(calls().length - before === 2, `${move.name}: another amount is a second move (${calls().length - before - 1})`);
        figures.check(
          h.upstream.seen.some((s) => s.path === move.upstream && s.headers.authorization === `Bearer ${otherSession}`),
          `${move.name}: the same body from another session is its own move`,
        );
        h.upstream.heal();
      }
    }
    figures.check(h.crashes.length === 0, `uncaught errors: ${h.crashes.slice(0, 3).join('; ')}`);
    figures.note(`double-submit rounds: ${Math.max(3, Math.ceil(ROUNDS / 4))} per move (concurrent ×3, back to back, two controls)`);
  });
  assert.equal(figures.failureCount, 0, figures.summary());
});
