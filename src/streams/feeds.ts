/**
 * Shared anonymous feeds (docs/behaviour.md "Live streams", "Shared anonymous feeds"): the streams
 * without a session to one sub-path and query share one upstream stream per instance. The first viewer
 * opens it; viewers who come while it opens wait for the same answer; a new viewer joins from the next
 * event, or, with a `Last-Event-ID` the short replay buffer still holds, from the event after it. The
 * upstream stream closes {@link FEED_LINGER_MS} after its last viewer left (a viewer who comes back
 * meanwhile finds it open), and when it ends or stays silent, every viewer's stream ends with it.
 * Streams with a session are never shared: their upstream answer is the user's.
 *
 * @module
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import { type EventSink, relayEvents, type RelayLimits, type SseClient } from './sse-relay.js';
import { eventId } from './sse.js';

/** How long a feed's upstream stream stays open after its last viewer left, in milliseconds. */
export const FEED_LINGER_MS = 5_000;

/** Events the replay buffer of a feed holds at most (the oldest go first). */
export const REPLAY_EVENTS = 256;

/** Bytes the replay buffer of a feed holds at most (the oldest events go first). */
export const REPLAY_BYTES = 1024 * 1024;

/** What opening a feed's upstream stream gave, as every waiting viewer sees it. */
export type FeedOpening =
  /** A 2xx event stream: the viewers join. */
  | { readonly kind: 'open'; readonly contentType: string }
  /** Any other answer (its body read, at most a bounded size): each viewer answers it as its own. */
  | { readonly kind: 'answer'; readonly status: number; readonly headers: IncomingHttpHeaders; readonly body: Buffer }
  /** A 2xx that is no event stream: each viewer goes the passthrough's ordinary way. */
  | { readonly kind: 'not_live' };

/** What a feed's opener gives: the answer's opening, and the body of an event stream to relay. */
export interface OpenedFeed {
  readonly opening: FeedOpening;
  readonly body?: Readable | undefined;
}

/** Told of a feed's upstream stream opening and ending (the `feed` kind of the stream metrics). */
export interface FeedObserver {
  opened(): void;
  ended(reason: 'idle' | 'upstream' | 'client', seconds: number): void;
}

interface Replayed {
  readonly id: string | undefined;
  readonly event: Buffer;
}

class Feed implements EventSink {
  readonly viewers = new Set<SseClient>();
  readonly ready: Promise<FeedOpening>;
  readonly #replay: Replayed[] = [];
  #replayBytes = 0;
  #linger: NodeJS.Timeout | undefined;
  #stop: (() => void) | undefined;
  #over = false;
  readonly #openedAt = performance.now();
  readonly #onOver: (feed: Feed, reason: 'idle' | 'upstream' | 'client') => void;
  readonly #lingerMs: number;

  constructor(
    open: () => Promise<OpenedFeed>,
    limits: RelayLimits,
    lingerMs: number,
    onOver: (feed: Feed, reason: 'idle' | 'upstream' | 'client') => void,
  ) {
    this.#onOver = onOver;
    this.#lingerMs = lingerMs;
    this.ready = open().then(
      (opened) => {
        if (opened.opening.kind === 'open' && opened.body !== undefined) this.#stop = relayEvents(opened.body, this, limits);
        else this.#finish('upstream');
        return opened.opening;
      },
      (error: unknown) => {
        this.#finish('upstream');
        throw error;
      },
    );
  }

  get seconds(): number {
    return (performance.now() - this.#openedAt) / 1000;
  }

  /** Adds a viewer, first with the replayed events after `lastEventId` when the buffer holds it. */
  join(viewer: SseClient, lastEventId: string | undefined): void {
    clearTimeout(this.#linger);
    this.#linger = undefined;
    if (lastEventId !== undefined) {
      const at = this.#replay.findIndex((entry) => entry.id === lastEventId);
      if (at >= 0) for (const entry of this.#replay.slice(at + 1)) if (!viewer.send(entry.event)) return;
    }
    if (this.#over) {
      viewer.end('upstream');
      return;
    }
    this.viewers.add(viewer);
    viewer.onClose(() => this.#leave(viewer));
  }

  #leave(viewer: SseClient): void {
    this.viewers.delete(viewer);
    if (this.viewers.size > 0 || this.#over) return;
    this.#linger = setTimeout(() => {
      this.#stop?.();
      this.#finish('client');
    }, this.#lingerMs);
  }

  event(event: Buffer): boolean {
    const id = eventId(event);
    this.#replay.push({ id, event });
    this.#replayBytes += event.length;
    while (this.#replay.length > REPLAY_EVENTS || this.#replayBytes > REPLAY_BYTES)
      this.#replayBytes -= (this.#replay.shift() as Replayed).event.length;
    for (const viewer of this.viewers) viewer.send(event);
    return true;
  }

  over(reason: 'idle' | 'upstream'): void {
    this.#finish(reason);
    for (const viewer of [...this.viewers]) viewer.end(reason);
  }

  #finish(reason: 'idle' | 'upstream' | 'client'): void {
    if (this.#over) return;
    this.#over = true;
    clearTimeout(this.#linger);
    this.#onOver(this, reason);
  }

  /** Ends the feed and every viewer's stream (drain: the viewers were ended before). */
  close(): void {
    this.#stop?.();
    this.#finish('client');
  }
}

/** See the module documentation. */
export class SharedFeeds {
  readonly #feeds = new Map<string, Feed>();
  readonly #limits: RelayLimits;
  readonly #lingerMs: number;
  readonly #observer: FeedObserver | undefined;

  constructor(limits: RelayLimits, options: { lingerMs?: number | undefined; observer?: FeedObserver | undefined } = {}) {
    this.#limits = limits;
    this.#lingerMs = options.lingerMs ?? FEED_LINGER_MS;
    this.#observer = options.observer;
  }

  /** Feeds open (or opening) now. */
  get size(): number {
    return this.#feeds.size;
  }

  /** Viewers of the feed of `key` now (0 when there is none). */
  viewersOf(key: string): number {
    return this.#feeds.get(key)?.viewers.size ?? 0;
  }

  /**
   * The opening of the feed of `key` (a sub-path and query), opened with `open` when there is none yet.
   * Once it is `open`, call {@link join} with the viewer.
   * @throws what `open` threw (an `UpstreamError`), to every viewer that waited for it.
   */
  ready(key: string, open: () => Promise<OpenedFeed>): Promise<FeedOpening> {
    let feed = this.#feeds.get(key);
    if (feed === undefined) {
      feed = new Feed(open, this.#limits, this.#lingerMs, (over, reason) => {
        if (this.#feeds.get(key) === over) this.#feeds.delete(key);
        this.#observer?.ended(reason, over.seconds);
      });
      this.#feeds.set(key, feed);
      this.#observer?.opened();
    }
    return feed.ready;
  }

  /**
   * Adds `viewer` to the open feed of `key`; `false` when that feed is gone meanwhile (it ended while
   * the viewer was being set up: the viewer is ended as by the upstream's end).
   */
  join(key: string, viewer: SseClient, lastEventId: string | undefined): boolean {
    const feed = this.#feeds.get(key);
    if (feed === undefined) {
      viewer.end('upstream');
      return false;
    }
    feed.join(viewer, lastEventId);
    return true;
  }

  /** Closes every feed (the viewers' streams are ended first by the drain). */
  close(): void {
    for (const feed of [...this.#feeds.values()]) feed.close();
  }
}
