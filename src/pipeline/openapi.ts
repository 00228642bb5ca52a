/**
 * Pipeline step **OpenAPI** (registered before the route tables, so that it sees every route; serves
 * nothing in production; CONTRACT.md "Operations"): the OpenAPI document of every `/api` route, built
 * from the route rows' schemas by `@fastify/swagger`, at `GET /openapi.json`, with the session cookie
 * and the operator bearer as security schemes.
 *
 * @module
 */
import swagger from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Config } from '../config.js';

/** Options of the {@link openapi} plugin. */
export interface OpenApiOptions {
  config: Pick<Config, 'buildId' | 'sessionCookieName' | 'production'>;
}

/** The document and its route (see the module documentation). */
export const openapi = fp(
  async (app: FastifyInstance, { config }: OpenApiOptions) => {
    await app.register(swagger, {
      openapi: {
        info: { title: 'Front proxy', version: config.buildId, description: 'The /api routes of the front proxy (spec part 4).' },
        components: {
          securitySchemes: {
            sessionCookie: { type: 'apiKey', in: 'cookie', name: config.sessionCookieName },
            operatorBearer: { type: 'http', scheme: 'bearer' },
          },
        },
      },
    });
    if (!config.production) {
      app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
    }
  },
  { name: 'openapi' },
);
