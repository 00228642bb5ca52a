/**
 * Configuration of the proxy (docs/behaviour.md "Configuration"): the modules of `config/` under one
 * import path. The schema of the variables is `config/schema.ts`, their reading `config/load.ts`, the
 * Redis deployment `config/redis.ts`, the bind check `config/bind.ts`; the BFF's token keys are read
 * beside the token check (`session/token-keys.ts`).
 *
 * @module
 */
export { checkHostBindable } from './config/bind.js';
export { type Config, loadConfig, PACKAGE_VERSION, withUpstreams } from './config/load.js';
export { ConfigError } from './config/problems.js';
export {
  REDIS_DEFAULT_PORT,
  type RedisAddress,
  type RedisTopology,
  type RedisVariables,
  redisTopology,
  SENTINEL_DEFAULT_PORT,
} from './config/redis.js';
export {
  CATALOGUE_FOR_SESSIONS_MODES,
  type CatalogueForSessions,
  type Env,
  EnvSchema,
  LOG_LEVELS,
  MAX_REPLICAS_ACK,
  REGISTER_TYPES,
  type RegisterType,
  UPSTREAM_URL_VARIABLES,
  type UpstreamUrlVariable,
} from './config/schema.js';
