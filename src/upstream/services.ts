/**
 * The upstream services by name (docs/behaviour.md "Configuration": one variable each), built once per app
 * over one {@link PoolRegistry}, and the {@link UpstreamCaller} interface through which everything
 * above this layer (session, catalogue, routes) calls them for a request.
 *
 * @module
 */
import type { Config, UpstreamUrlVariable } from '../config.js';
import { type UpstreamRequest, type UpstreamResponse, UpstreamService, type UpstreamStream } from './client.js';
import { type PoolOptions, PoolRegistry } from './pools.js';

/** The upstream services, named after their configuration variables (docs/behaviour.md "Configuration"). */
export type ServiceName = 'bff' | 'sticker' | 'referralV1' | 'referralV2' | 'ftdVerify' | 'ftdSend' | 'attribution' | 'cachePurge';

/** The configuration variable of each service. */
export const SERVICE_VARIABLES: Readonly<Record<ServiceName, UpstreamUrlVariable>> = {
  bff: 'BFF_BASE_URL',
  sticker: 'STICKER_API_URL',
  referralV1: 'REFERRAL_V1_API_URL',
  referralV2: 'REFERRAL_V2_API_URL',
  ftdVerify: 'FTD_CASHBACK_VERIFY_URL',
  ftdSend: 'FTD_CASHBACK_SEND_URL',
  attribution: 'ATTRIBUTION_S2S_URL',
  cachePurge: 'CACHE_PURGE_URL',
};

/** Every upstream service of an app, with the pools they share. */
export interface UpstreamServices {
  readonly services: Readonly<Record<ServiceName, UpstreamService>>;
  /** The pools and endpoint guards the services share. */
  readonly pools: PoolRegistry;
  /** Closes every pool (at app close). */
  close(): Promise<void>;
}

/**
 * Builds one {@link UpstreamService} per configured variable over one pool registry (undici `Pool`s
 * per origin, a guard per endpoint with `config.upstreamLimits`). A service whose variable is unset
 * answers `not_configured` on each call.
 *
 * @param watchers - the metrics, the log and the tracer ({@link PoolOptions}); omit when nothing observes.
 */
export function createUpstreamServices(
  config: Pick<Config, 'upstreams' | 'upstreamTimeoutMs'> & Partial<Pick<Config, 'upstreamLimits' | 'upstreamMaxResponseBytes'>>,
  watchers: Omit<PoolOptions, 'limits' | 'maxResponseBytes'> = {},
): UpstreamServices {
  const pools = new PoolRegistry(config.upstreamTimeoutMs, {
    limits: config.upstreamLimits,
    maxResponseBytes: config.upstreamMaxResponseBytes,
    ...watchers,
  });
  const services = {} as Record<ServiceName, UpstreamService>;
  for (const [name, variable] of Object.entries(SERVICE_VARIABLES) as [ServiceName, UpstreamUrlVariable][]) {
    services[name] = new UpstreamService(variable, config.upstreams[variable], pools);
  }
  return { services, pools, close: () => pools.close() };
}

/**
 * Upstream calls made for one request: the proxy's headers (`Authorization: Bearer <jwt>` when a
 * session is present, the incoming `Cookie`, the request id, the client's address) are set by the
 * implementation and override the call's own (docs/behaviour.md "Upstream requests").
 */
export interface UpstreamCaller {
  /** The session JWT when the session cookie is present. */
  readonly token: string | undefined;
  /** The request id (sent upstream as `X-Request-Id`). */
  readonly requestId: string;
  /** The incoming request the calls are made for (tracing: their spans' parent, a fill's link). */
  readonly request?: object;
  /**
   * One buffered upstream call. `bearer` replaces the session's JWT (`null`: no `Authorization`).
   * `shared`: the answer is shared with other requests (a single-flight cache load), so the client's
   * departure does not cancel it; otherwise a read is cancelled when its client leaves.
   * @throws UpstreamError on transport failures and refusals (`upstream_busy`, `upstream_circuit_open`).
   */
  call(service: ServiceName, req: UpstreamRequest, options?: { bearer?: string | null; shared?: boolean }): Promise<UpstreamResponse>;
  /** As {@link call}, with the answer body streamed. */
  stream(service: ServiceName, req: UpstreamRequest): Promise<UpstreamStream>;
}
