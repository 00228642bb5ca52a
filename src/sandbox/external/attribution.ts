/**
 * The attribution provider of the sandbox external server (spec 4.10, 6.3): `POST /attribution/s2s`
 * (the URL of `ATTRIBUTION_S2S_URL`) accepts a server-to-server event with a string `event` and
 * records it; anything else is 422 `invalid_event`.
 *
 * | endpoint | answer |
 * |---|---|
 * | `POST /attribution/s2s` | 202 `{ ok: true, id }` |
 * | `GET /__sandbox/attribution/events` | `{ events: [{ id, at, body, authorization, cookie }] }`, oldest first |
 *
 * @module
 */
import { randomUUID } from 'node:crypto';
import type { SandboxArea } from '../context.js';
import { asRecord, sendError } from '../http.js';
import { defineAreaState } from '../store.js';
import { EXTERNAL_PATHS } from './paths.js';

/** One event received by the provider. */
export interface AttributionReceived {
  id: string;
  /** Epoch ms. */
  at: number;
  body: Record<string, unknown>;
  /** Whether an `Authorization` header came along (the proxy sends none). */
  authorization: boolean;
  cookie: string | null;
}

/** Events received, oldest first. */
export const attributionState = defineAreaState('attribution', () => ({ events: [] as AttributionReceived[] }));

/** The attribution provider. */
export const attributionArea: SandboxArea = {
  name: 'attribution',
  register(app, ctx) {
    app.post(EXTERNAL_PATHS.attributionS2s, async (request, reply) => {
      const body = asRecord(request.body);
      if (typeof body.event !== 'string' || body.event === '') return sendError(reply, 422, 'invalid_event', 'event is required');
      const id = randomUUID();
      ctx.store.areaState(attributionState).events.push({
        id,
        at: ctx.store.now(),
        body,
        authorization: request.headers.authorization !== undefined,
        cookie: request.headers.cookie ?? null,
      });
      return reply.code(202).send({ ok: true, id });
    });
    app.get('/__sandbox/attribution/events', async () => ({ events: ctx.store.areaState(attributionState).events }));
  },
};
