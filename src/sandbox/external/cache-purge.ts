/**
 * The worker-cache purge endpoint of the sandbox external server (spec 4.10): `POST /cache/purge`
 * (the URL of `CACHE_PURGE_URL`) records each purge and answers `{ ok: true, purged: true, id }`.
 *
 * Admin (external server): `GET /__sandbox/cache-purge/received` → `{ purges: [{ id, at, body, authorization }] }`.
 *
 * @module
 */
import { randomUUID } from 'node:crypto';
import type { SandboxArea } from '../context.js';
import { asRecord } from '../http.js';
import { defineAreaState } from '../store.js';
import { EXTERNAL_PATHS } from './paths.js';

/** One purge received. */
export interface PurgeReceived {
  id: string;
  /** Epoch ms. */
  at: number;
  body: Record<string, unknown>;
  authorization: boolean;
}

/** Purges received, oldest first. */
export const cachePurgeState = defineAreaState('cache-purge', () => ({ purges: [] as PurgeReceived[] }));

/** The purge endpoint. */
export const cachePurgeArea: SandboxArea = {
  name: 'cache-purge',
  register(app, ctx) {
    app.post(EXTERNAL_PATHS.cachePurge, async (request) => {
      const id = randomUUID();
      ctx.store.areaState(cachePurgeState).purges.push({
        id,
        at: ctx.store.now(),
        body: asRecord(request.body),
        authorization: request.headers.authorization !== undefined,
      });
      return { ok: true, purged: true, id };
    });
    app.get('/__sandbox/cache-purge/received', async () => ({ purges: ctx.store.areaState(cachePurgeState).purges }));
  },
};
