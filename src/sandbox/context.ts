/**
 * What every sandbox route can reach (store, token service, its server's traffic log, the URLs
 * of the three servers) and the shape of an area plugin.
 *
 * @module
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { SandboxStore } from './store.js';
import type { SandboxTokens } from './tokens.js';
import type { SandboxServerName, TrafficLog } from './traffic.js';

/** Base URLs of the three sandbox servers, without a trailing slash; filled once they listen. */
export interface SandboxServerUrls {
  bff: string;
  sticker: string;
  external: string;
}

/** Shared by every route of one sandbox server. */
export interface SandboxContext {
  /** Which server this context belongs to. */
  readonly server: SandboxServerName;
  /** The state shared by the three servers. */
  readonly store: SandboxStore;
  /** Signs and verifies the BFF session JWTs. */
  readonly tokens: SandboxTokens;
  /** This server's request log and fail-next rules (`store.traffic[server]`). */
  readonly traffic: TrafficLog;
  /** Base URLs of the three servers (empty strings until they listen). */
  readonly urls: Readonly<SandboxServerUrls>;
}

/**
 * One upstream area (auth, wallet, games…): a set of routes registered in its own encapsulated
 * Fastify plugin, under `prefix` when given. Hooks it adds stay inside the area.
 *
 * @example
 * ```ts
 * export const walletArea: SandboxArea = {
 *   name: 'wallet',
 *   register(app, ctx) {
 *     app.get('/users/wallet', withUser(async (request, reply, user) => ({ ...user.profile.wallet })));
 *   },
 * };
 * ```
 */
export interface SandboxArea {
  /** Short name, used in logs. */
  readonly name: string;
  /** URL prefix of every route of the area (e.g. `/referral-v1` on the external server). */
  readonly prefix?: string;
  /** Declares the routes. */
  readonly register: (app: FastifyInstance, ctx: SandboxContext) => void | Promise<void>;
}

const kContext = Symbol('sandbox.context');

/** Attaches a context to a server (done once by the sandbox for each of its servers). */
export function attachContext(app: FastifyInstance, ctx: SandboxContext): void {
  app.decorate(kContext, ctx);
}

/**
 * The context of the server that received `request` (or of a Fastify instance).
 *
 * @throws {Error} when the instance is not a sandbox server.
 */
export function sandboxContext(from: FastifyRequest | FastifyInstance): SandboxContext {
  const instance = ('raw' in from ? from.server : from) as unknown as Record<symbol, SandboxContext | undefined>;
  const ctx = instance[kContext];
  if (!ctx) throw new Error('not a sandbox server');
  return ctx;
}
