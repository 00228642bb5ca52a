/**
 * The OpenAPI document of the proxy (`GET /openapi.json`, docs/behaviour.md "Operations"), as a
 * development app built in this process answers it: the one source of the generated references
 * (docs/api-reference.md, the SDK's route types).
 */
import { createServer } from '../src/app.js';

/** A JSON object of the document. */
export type Json = Record<string, unknown>;

/**
 * Builds the app, asks it for its document and closes it.
 * @throws Error when the document is not answered 200.
 */
export async function openapiDocument(): Promise<Json> {
  // The document, never a load-shedding refusal of a busy machine.
  const app = await createServer({ NODE_ENV: 'development', LOG_LEVEL: 'silent', LOAD_SHED_EVENT_LOOP_DELAY_MS: '0' });
  try {
    await app.ready();
    const answer = await app.inject({ method: 'GET', url: '/openapi.json' });
    if (answer.statusCode !== 200) throw new Error(`GET /openapi.json answered ${answer.statusCode}: ${answer.body.slice(0, 200)}`);
    return answer.json() as Json;
  } finally {
    await app.close();
  }
}
