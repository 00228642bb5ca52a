/**
 * One browser's event stream ({@link SseClient}) and the relay of one upstream event stream to it
 * ({@link relayEvents}; docs/behaviour.md "Live streams", "Server-Sent Events").
 *
 * The browser's side is a `Readable` the reply sends (Fastify pipes it with back-pressure). Each whole
 * event is scrubbed of the session cookie's values and pushed at once: nothing waits for more bytes.
 * What the browser has not taken yet is bounded ({@link CLIENT_BUFFER_BYTES}): a consumer that falls
 * that far behind is disconnected (`slow_consumer`) and resumes with `Last-Event-ID`, never buffered
 * without bound. An end the proxy decides (idle, lifetime, drain, session) comes between two events:
 * the proxy's own last event (a `retry:` hint, or `session-ended`), then the end of the answer.
 *
 * @module
 */
import { Readable } from 'node:stream';
import type { Secrets } from '../session/redact.js';
import { EventScrubber, EventSplitter, OversizedEventError, retryHint } from './sse.js';

/**
 * Why a stream ended (`streams_ended_total{reason}`): the browser left (`client`), the upstream ended
 * or broke (`upstream`), upstream silence over `STREAM_IDLE_TIMEOUT_MS` (`idle`), `STREAM_MAX_LIFETIME_MS`
 * (`lifetime`), the session ended (`session`), SIGTERM (`drain`), the browser fell behind its buffer
 * (`slow_consumer`), a bound refused it (`refused`).
 */
export const END_REASONS = ['client', 'upstream', 'idle', 'lifetime', 'session', 'drain', 'slow_consumer', 'refused'] as const;
export type EndReason = (typeof END_REASONS)[number];

/**
 * Bytes a browser may leave untaken in the proxy's buffer of its stream before it is disconnected
 * (256 KiB; the socket's own buffers come on top): a few seconds of a busy odds feed.
 */
export const CLIENT_BUFFER_BYTES = 256 * 1024;

/** The spread of the `retry:` hint of a stream the proxy ends so that its browser reconnects, in milliseconds. */
export const RETRY_HINT_MS = { min: 1_000, max: 5_000 } as const;

/** Options of an {@link SseClient}. */
export interface SseClientOptions {
  /** The values to scrub from every event (the session cookie as the browser sent it). */
  readonly secrets: Secrets;
  /** Told once, when the stream ended, why. */
  readonly onEnd: (reason: EndReason) => void;
  /** Bytes the browser may leave untaken; default {@link CLIENT_BUFFER_BYTES}. */
  readonly bufferBytes?: number | undefined;
  /** Random source in [0, 1) of the `retry:` hint's jitter; default `Math.random`. */
  readonly random?: (() => number) | undefined;
}

/** The `read` of a browser's stream: nothing to fetch, its events are pushed as they come (one function for every stream). */
function pushedOnly(): void {}

/**
 * See the module documentation. It is its relay's {@link EventSink} itself: a private stream's relay
 * holds no closures of its own for as long as the stream is open (docs/behaviour.md "Live streams",
 * "Memory").
 */
export class SseClient implements EventSink {
  /** What the reply sends. */
  readonly out: Readable;
  readonly #scrubber: EventScrubber;
  readonly #bufferBytes: number;
  readonly #random: () => number;
  readonly #onEnd: (reason: EndReason) => void;
  #ended = false;
  /** Told once when the stream ends (the relay's upstream is destroyed then); most streams have one, none has many. */
  #closers: (() => void)[] | undefined;

  constructor(options: SseClientOptions) {
    this.#scrubber = new EventScrubber(options.secrets);
    this.#bufferBytes = options.bufferBytes ?? CLIENT_BUFFER_BYTES;
    this.#random = options.random ?? Math.random;
    this.#onEnd = options.onEnd;
    this.out = new Readable({ read: pushedOnly });
    // The reply destroys the stream when the browser's connection closes before its end. (A stream
    // closes once: a plain listener, without the wrapper of a `once`.)
    this.out.on('close', () => this.#finish('client'));
  }

  /** True once the stream ended, for whatever reason. */
  get ended(): boolean {
    return this.#ended;
  }

  /** Runs `close` once the stream ends (at once when it has). */
  onClose(close: () => void): void {
    if (this.#ended) close();
    else if (this.#closers === undefined) this.#closers = [close];
    else this.#closers.push(close);
  }

  /**
   * Sends one whole event, scrubbed. A browser whose untaken bytes pass the buffer's bound is
   * disconnected (`slow_consumer`).
   * @returns false once the stream has ended.
   */
  send(event: Buffer): boolean {
    if (this.#ended) return false;
    this.out.push(this.#scrubber.scrub(event));
    if (this.out.readableLength > this.#bufferBytes) {
      this.#finish('slow_consumer');
      this.out.destroy();
      return false;
    }
    return true;
  }

  /** {@link EventSink.event}: {@link send}. */
  event(event: Buffer): boolean {
    return this.send(event);
  }

  /** {@link EventSink.over}: the upstream stream is over, the browser's ends between two events ({@link end}). */
  over(reason: 'idle' | 'upstream'): void {
    this.end(reason);
  }

  /**
   * Ends the stream between two events: `last` (the proxy's own last event) or, without it, a `retry:`
   * hint drawn in {@link RETRY_HINT_MS}, then the end of the answer. Does nothing once ended.
   */
  end(reason: EndReason, last?: Buffer): void {
    if (this.#ended) return;
    this.#finish(reason);
    this.out.push(last ?? retryHint(RETRY_HINT_MS.min, RETRY_HINT_MS.max, this.#random));
    this.out.push(null);
  }

  /** Cuts the stream without an end (an upstream that broke mid-way is ended cleanly instead: see {@link end}). */
  destroy(reason: EndReason): void {
    if (this.#ended) return;
    this.#finish(reason);
    this.out.destroy();
  }

  #finish(reason: EndReason): void {
    if (this.#ended) return;
    this.#ended = true;
    const closers = this.#closers;
    this.#closers = undefined;
    if (closers !== undefined) for (const close of closers) close();
    this.#onEnd(reason);
  }
}

/** The limits of one relayed upstream stream. */
export interface RelayLimits {
  /** `STREAM_IDLE_TIMEOUT_MS`: longest silence between upstream bytes, in milliseconds. */
  readonly idleTimeoutMs: number;
  /** Longest event held while its end has not come, in bytes (default `MAX_EVENT_BYTES`). */
  readonly maxEventBytes?: number | undefined;
}

/** Where an upstream stream's events go: one browser, or a shared feed's viewers. */
export interface EventSink {
  /** One whole event (not scrubbed yet). @returns false when nobody takes events any more. */
  event(event: Buffer): boolean;
  /** The upstream stream is over: `idle` (its silence ran over the limit) or `upstream` (it ended, broke, or sent no event stream). */
  over(reason: 'idle' | 'upstream'): void;
}

/**
 * Reads an upstream event stream's body into whole events for `sink`, until the body ends or breaks
 * (`upstream`), or stays silent for `idleTimeoutMs` (`idle`). The half event in hand at that moment is
 * dropped. Returns the function that stops the relay and destroys the body (the browser left).
 *
 * @param body - a stream destroyed once it ended or failed (`autoDestroy`, as undici's bodies are): its
 *   `close` is how the relay learns of both.
 */
export function relayEvents(body: Readable, sink: EventSink, limits: RelayLimits): () => void {
  const splitter = new EventSplitter(limits.maxEventBytes);
  let done = false;
  const stop = (reason: 'idle' | 'upstream' | undefined) => {
    if (done) return;
    done = true;
    clearTimeout(idle);
    body.off('data', onData);
    body.destroy();
    if (reason !== undefined) sink.over(reason);
  };
  const idle = setTimeout(() => stop('idle'), limits.idleTimeoutMs);
  const onData = (chunk: Buffer) => {
    idle.refresh();
    let events: Buffer[];
    try {
      events = splitter.push(chunk);
    } catch (error) {
      if (!(error instanceof OversizedEventError)) throw error;
      stop('upstream');
      return;
    }
    for (const event of events) if (!sink.event(event)) return stop(undefined);
  };
  body.on('data', onData);
  // One listener for every way the body ends: an upstream body (undici's, destroyed once it ended or
  // failed) closes after its end and after its error, and `stop` runs once. (`openStream` keeps an
  // `error` listener on it, so an error without a listener of ours never ends the process.)
  body.on('close', () => stop('upstream'));
  return () => stop(undefined);
}
