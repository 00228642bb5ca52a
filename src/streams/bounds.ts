/**
 * The bounds of the open live streams (docs/behaviour.md "Live streams", "Bounds"): per session
 * (`STREAMS_PER_SESSION`), per client address (`STREAMS_PER_ADDRESS`, IPv6 by its /64) and per process
 * (`STREAMS_MAX`). A stream takes a {@link StreamLease} before anything is sent upstream and gives it
 * back once when it ends; a stream over a bound gets a {@link StreamRefusal} to answer instead.
 *
 * @module
 */
import { envelopeText } from '../envelope.js';
import { addressKey } from '../state/address-key.js';

/** The bounds, from the configuration. */
export interface StreamLimits {
  readonly perSession: number;
  readonly perAddress: number;
  readonly max: number;
}

/** Which bound refused a stream: the label of `streams_ended_total{reason="refused"}`'s log line. */
export type StreamBound = 'session' | 'address' | 'process';

/**
 * A refusal (docs/behaviour.md "Error envelope"): 429 `rate_limited` for a session or an address
 * over its bound, 503 `overloaded` for a process at its bound, each with `Retry-After` in seconds and
 * the envelope's text (serialised once).
 */
export interface StreamRefusal {
  readonly bound: StreamBound;
  readonly status: 429 | 503;
  readonly retryAfterSeconds: number;
  /** The envelope, as JSON text. */
  readonly body: string;
}

/** `Retry-After` of a refused stream, in seconds: another stream of the same browser ends, or another instance takes it, within a few seconds. */
export const STREAM_RETRY_AFTER_SECONDS = 5;

const REFUSALS: Readonly<Record<StreamBound, StreamRefusal>> = {
  session: {
    bound: 'session',
    status: 429,
    retryAfterSeconds: STREAM_RETRY_AFTER_SECONDS,
    body: envelopeText('rate_limited', 'Too many live streams are open for this session; close one and try again'),
  },
  address: {
    bound: 'address',
    status: 429,
    retryAfterSeconds: STREAM_RETRY_AFTER_SECONDS,
    body: envelopeText('rate_limited', 'Too many live streams are open from this address; close one and try again'),
  },
  process: {
    bound: 'process',
    status: 503,
    retryAfterSeconds: STREAM_RETRY_AFTER_SECONDS,
    body: envelopeText('overloaded', 'The server holds as many live streams as it can; try again shortly'),
  },
};

/** One open stream's place in the bounds; {@link release} gives it back (once; later calls do nothing). */
export interface StreamLease {
  release(): void;
}

/** See the module documentation. */
export class StreamBounds {
  readonly #limits: StreamLimits;
  readonly #bySession = new Map<string, number>();
  readonly #byAddress = new Map<string, number>();
  #open = 0;

  constructor(limits: StreamLimits) {
    this.#limits = limits;
  }

  /** Streams open now. */
  get open(): number {
    return this.#open;
  }

  /**
   * Takes a place for one stream, or says which bound refuses it (nothing taken then).
   *
   * @param sessionKey - the session token's SHA-256 hex digest; `undefined` for a stream without a session.
   * @param ip - the client address (`request.ip`); counted by its /64 when it is IPv6.
   */
  take(sessionKey: string | undefined, ip: string): StreamLease | StreamRefusal {
    if (this.#open >= this.#limits.max) return REFUSALS.process;
    const address = addressKey(ip);
    if ((this.#byAddress.get(address) ?? 0) >= this.#limits.perAddress) return REFUSALS.address;
    if (sessionKey !== undefined && (this.#bySession.get(sessionKey) ?? 0) >= this.#limits.perSession) return REFUSALS.session;
    this.#open++;
    add(this.#byAddress, address, 1);
    if (sessionKey !== undefined) add(this.#bySession, sessionKey, 1);
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        this.#open--;
        add(this.#byAddress, address, -1);
        if (sessionKey !== undefined) add(this.#bySession, sessionKey, -1);
      },
    };
  }
}

/** Adds `delta` to the count of `key`, dropping a count that falls to 0 (the maps hold open streams only). */
function add(counts: Map<string, number>, key: string, delta: number): void {
  const next = (counts.get(key) ?? 0) + delta;
  if (next <= 0) counts.delete(key);
  else counts.set(key, next);
}

/** Whether {@link StreamBounds.take} refused. */
export function isRefusal(value: StreamLease | StreamRefusal): value is StreamRefusal {
  return 'status' in value;
}
