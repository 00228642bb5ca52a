/**
 * The Server-Sent Events format as the live streams need it (docs/behaviour.md "Live streams"; the
 * WHATWG HTML standard, "Server-sent events", 9.2.5 and 9.2.6): an upstream body cut into whole events
 * ({@link EventSplitter}), each scrubbed of the session cookie's values before it leaves
 * ({@link scrubEvent}), and the few events the proxy writes itself (`retry:` hints, `session-ended`).
 *
 * An event is the bytes up to and including the blank line that ends it; a line ends with CRLF, LF or
 * CR. Only whole events are passed on, so a stream the proxy ends — idle, lifetime, drain, session —
 * always ends between two events: a browser never sees half of one.
 *
 * @module
 */
import { redactBody, redactEscapedJson, redactionValues, type Secrets } from '../session/redact.js';

/** The media type of an event stream. */
export const EVENT_STREAM_TYPE = 'text/event-stream';

/**
 * Longest event the proxy holds while it waits for the blank line that ends it, in bytes (256 KiB):
 * an upstream that sends more without one sends no event stream (garbage, a binary body), and its
 * stream is ended.
 */
export const MAX_EVENT_BYTES = 256 * 1024;

const LF = 0x0a;
const CR = 0x0d;

/** Whether a `Content-Type` (or `Accept`) value names `text/event-stream`. */
export function isEventStream(value: string | string[] | undefined): boolean {
  if (value === undefined) return false;
  const text = Array.isArray(value) ? value.join(',') : value;
  return text.toLowerCase().includes(EVENT_STREAM_TYPE);
}

/** Thrown by {@link EventSplitter.push} when more than {@link MAX_EVENT_BYTES} arrive without an event's end. */
export class OversizedEventError extends Error {
  constructor() {
    super('an upstream event is longer than the proxy accepts');
    this.name = 'OversizedEventError';
  }
}

/** What an {@link EventSplitter} holds between events: nothing (one buffer shared by every splitter). */
const NOTHING_PENDING = Buffer.alloc(0);

/**
 * Cuts a byte stream into whole events. Holds only the event in hand (at most `maxEventBytes`);
 * whatever arrives after the last blank line waits for the next chunk.
 *
 * @example
 * const split = new EventSplitter();
 * split.push(Buffer.from('data: 1\n\nda')); // [<Buffer 'data: 1\n\n'>]
 * split.push(Buffer.from('ta: 2\n\n'));    // [<Buffer 'data: 2\n\n'>]
 */
export class EventSplitter {
  /** The start of an event in hand: {@link NOTHING_PENDING}, or bytes of its own (never a view that keeps a whole upstream chunk alive). */
  #pending: Buffer = NOTHING_PENDING;
  /** Where the scan of {@link #pending} resumes. */
  #scanFrom = 0;
  /** True when the last byte scanned ended a line (the next line end, right after it, ends the event). */
  #atLineStart = true;
  /** True when the last byte scanned was a CR (an LF right after it belongs to the same line end). */
  #afterCr = false;
  readonly #maxEventBytes: number;

  constructor(maxEventBytes = MAX_EVENT_BYTES) {
    this.#maxEventBytes = maxEventBytes;
  }

  /** Bytes held: the start of an event whose end has not come yet. */
  get pendingBytes(): number {
    return this.#pending.length;
  }

  /**
   * The whole events `chunk` completes, in order (possibly none).
   * @throws OversizedEventError when the event in hand grows past `maxEventBytes`.
   */
  push(chunk: Buffer): Buffer[] {
    const data = this.#pending.length === 0 ? chunk : Buffer.concat([this.#pending, chunk]);
    const events: Buffer[] = [];
    let start = 0;
    let atLineStart = this.#atLineStart;
    let afterCr = this.#afterCr;
    // The next LF and CR at or after the scan (-1: none left), found by the native byte search: the
    // bytes of a line between them are skipped at once rather than looked at one by one.
    let nextLf = -2;
    let nextCr = -2;
    for (let i = this.#scanFrom; i < data.length; i++) {
      if (nextLf !== -1 && nextLf < i) nextLf = data.indexOf(LF, i);
      if (nextCr !== -1 && nextCr < i) nextCr = data.indexOf(CR, i);
      const next = nextLf === -1 ? nextCr : nextCr === -1 ? nextLf : Math.min(nextLf, nextCr);
      if (next !== i) {
        // A run of line bytes up to the next line end (or to the end of the data).
        atLineStart = false;
        afterCr = false;
        if (next === -1) break;
        i = next;
      }
      const byte = data[i];
      if (byte === LF && afterCr) {
        // The LF of a CRLF: the line end was counted at its CR. After an event's end it is dropped.
        afterCr = false;
        if (i === start) start = i + 1;
        continue;
      }
      // `byte` is a line end (CR or LF): every other byte was skipped above.
      afterCr = byte === CR;
      if (i === start) {
        // A blank line between events dispatches nothing: dropped.
        start = i + 1;
        atLineStart = true;
        continue;
      }
      if (atLineStart) {
        // A line end right after a line end: the blank line that ends the event.
        events.push(data.subarray(start, i + 1));
        start = i + 1;
        continue;
      }
      atLineStart = true;
    }
    // A silent stream holds its splitter for minutes: what it keeps is the event in hand, copied, not
    // the chunk (or the socket read) it came in.
    this.#pending = start === data.length ? NOTHING_PENDING : Buffer.from(data.subarray(start));
    this.#scanFrom = this.#pending.length;
    this.#atLineStart = atLineStart;
    this.#afterCr = afterCr;
    if (this.#pending.length > this.#maxEventBytes) throw new OversizedEventError();
    return events;
  }
}

/**
 * The `id` field of an event (the last one it has), or `undefined` when it sets none. A value with a
 * NUL is ignored, as a browser ignores it.
 *
 * @example eventId(Buffer.from('id: 42\ndata: x\n\n')) // '42'
 */
export function eventId(event: Buffer): string | undefined {
  if (!event.includes('id')) return undefined;
  let id: string | undefined;
  for (const line of event.toString('utf8').split(/\r\n|\r|\n/)) {
    if (line !== 'id' && !line.startsWith('id:')) continue;
    const value = line.length <= 3 ? '' : line.slice(line[3] === ' ' ? 4 : 3);
    if (!value.includes('\0')) id = value;
  }
  return id;
}

/**
 * An event with every value of `secrets` replaced by `[redacted]` (docs/behaviour.md "Session cookie":
 * the same redaction as every other answer body), also in a `data:` line that writes a value with JSON
 * `\u` escapes; the event itself (same buffer) when it holds none. A whole event is scrubbed at once,
 * so a value split across upstream chunks is found.
 */
export function scrubEvent(event: Buffer, secrets: Secrets): Buffer {
  if (secrets === undefined || secrets.length === 0) return event;
  const plain = redactBody(event, secrets);
  let out = Buffer.isBuffer(plain) ? plain : Buffer.from(plain);
  if (out.includes('\\u')) {
    const values = typeof secrets === 'string' ? [secrets] : secrets;
    const lines = out.toString('utf8').split(/(\r\n|\r|\n)/);
    let changed = false;
    for (let i = 0; i < lines.length; i += 2) {
      const line = lines[i] as string;
      if (!line.startsWith('data:') || !line.includes('\\u')) continue;
      const at = line[5] === ' ' ? 6 : 5;
      let value = line.slice(at);
      for (const secret of values) value = redactEscapedJson(value, secret) ?? value;
      if (value !== line.slice(at)) {
        lines[i] = `${line.slice(0, at)}${value}`;
        changed = true;
      }
    }
    if (changed) out = Buffer.from(lines.join(''));
  }
  return out;
}

/** `\u`, the start of a JSON escape: an event holding one may write a secret with escapes. */
const JSON_ESCAPE = Buffer.from('\\u');

/**
 * {@link scrubEvent} for one stream's secrets, made once when the stream opens: the values to find
 * are kept as bytes, so that an event that holds none of them (and no JSON escape) is passed on as it
 * is after a byte search per value, without a string, an array or a sort of its own.
 *
 * @example
 * const scrub = new EventScrubber([token]);
 * scrub.scrub(Buffer.from(`data: ${token}\n\n`)); // <Buffer 'data: [redacted]\n\n'>
 */
export class EventScrubber {
  /**
   * The values to find, as UTF-8 bytes, in {@link redactionValues}' order. Only the bytes are kept: an
   * open stream holds its scrubber for its whole life, and the rare event that holds a value (or a
   * JSON escape) gets the values back from them (a header's value is Latin-1 text: its UTF-8 bytes
   * decode to the same string).
   */
  readonly #needles: readonly Buffer[];

  constructor(secrets: Secrets) {
    this.#needles = redactionValues(secrets).map((value) => Buffer.from(value));
  }

  /** The event, scrubbed as {@link scrubEvent} scrubs it (the same buffer when it holds nothing to scrub). */
  scrub(event: Buffer): Buffer {
    if (this.#needles.length === 0) return event;
    if (!this.#needles.some((needle) => event.includes(needle)) && !event.includes(JSON_ESCAPE)) return event;
    return scrubEvent(
      event,
      this.#needles.map((needle) => needle.toString('utf8')),
    );
  }
}

/**
 * The proxy's last event of a stream it ends so that the browser reconnects (lifetime, drain, idle):
 * a `retry:` hint in milliseconds, drawn between `minMs` and `maxMs` so that the reconnections of
 * many browsers spread over that time.
 *
 * @param random - a source in [0, 1) (replaceable in tests).
 * @example retryHint(1000, 5000, () => 0.5) // <Buffer 'retry: 3000\n\n'>
 */
export function retryHint(minMs: number, maxMs: number, random: () => number = Math.random): Buffer {
  const ms = Math.round(minMs + (maxMs - minMs) * random());
  return Buffer.from(`retry: ${ms}\n\n`);
}

/**
 * The event that ends a stream whose session ended (docs/behaviour.md "Live streams", "The session
 * holds the stream"): `event: session-ended` with `{"reason": …}` (`expired`, `logout`, `refused`).
 * The browser SDK runs its forced-logout flow on it and closes its `EventSource` for good.
 */
export function sessionEndedEvent(reason: SessionEndReason): Buffer {
  return Buffer.from(`event: session-ended\ndata: {"reason":"${reason}"}\n\n`);
}

/** Why a session ended a stream: its token's `exp` passed, a logout on any instance, or the token was refused. */
export type SessionEndReason = 'expired' | 'logout' | 'refused';

/** A comment line the proxy sends as the first bytes of a stream, so that every hop on the way sees the answer start at once. */
export const OPENING_COMMENT = Buffer.from(':\n\n');
