/**
 * Pipeline step **logging** (all along the request; its line is written when the request completes):
 * pino as Fastify's logger, JSON lines with `level` as its name and `time` in ISO 8601 (UTC,
 * milliseconds; docs/operations.md "Logs"), one line per request (method, path without query, status, time), the
 * credentials redacted (docs/behaviour.md "Session cookie": `cookie`, `authorization`, `set-cookie` and any
 * `access_token` never reach a log line, and every line is scrubbed of JWT-shaped values,
 * `access_token=` parameters and `Bearer` credentials, whatever field holds them: beacon fields, error
 * messages and causes, URLs), a request's child logger built only when it logs more than
 * its line, and in production an asynchronous destination fed in batches and flushed at close and exit.
 * Outside production, when standard output is a terminal, lines are pretty-printed (`pino-pretty`,
 * in process); otherwise, and always in production, they are JSON, one object a line.
 *
 * {@link createLogging} gives the Fastify constructor options and the plugin to register first.
 *
 * @module
 */
import { createRequire } from 'node:module';
import type { Writable } from 'node:stream';
import {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyPluginAsync,
  type FastifyReply,
  type FastifyRequest,
  type FastifyServerOptions,
  LogController,
} from 'fastify';
import fp from 'fastify-plugin';
import pino from 'pino';
import type { Config } from '../config.js';
import { scrubSecrets } from '../session/redact.js';

/** Redaction of logged credentials: `cookie`, `authorization`, `set-cookie` and any `access_token` field. */
export const LOG_REDACT_PATHS = [
  'req.headers.cookie',
  'req.headers.authorization',
  'res.headers["set-cookie"]',
  'headers.cookie',
  'headers.authorization',
  'headers["set-cookie"]',
  'cookie',
  'authorization',
  'access_token',
  '*.access_token',
  '*.*.access_token',
  '*.cookie',
  '*.authorization',
  '*["set-cookie"]',
  // headers logged by plugins at debug/trace level (e.g. the multipart parser's `busboyOptions.headers`)
  '*.headers.cookie',
  '*.headers.authorization',
  '*.headers["set-cookie"]',
];

/**
 * A destination that writes each line with its token-like values replaced (`scrubSecrets`,
 * `session/redact.ts`): the last step before any line leaves the process, so no field, message or
 * error text can carry a token to the log (docs/behaviour.md "Session cookie").
 */
function scrubbing(destination: { write(text: string): unknown }): { write(line: string): boolean } {
  return {
    write(line: string): boolean {
      destination.write(scrubSecrets(line));
      return true;
    },
  };
}

/**
 * Most bytes of log lines waiting to be written (16 MiB): when standard output does not keep up (a slow
 * pipe or collector), later lines are dropped rather than held in memory without bound.
 */
export const LOG_BUFFER_MAX_BYTES = 16 * 1024 * 1024;

/**
 * Counts the lines the destination drops (its buffer at {@link LOG_BUFFER_MAX_BYTES}) and writes one
 * warn line with the count once there is room again, at most every 10 s.
 */
function watchDroppedLines(destination: ReturnType<typeof pino.destination>): void {
  let dropped = 0;
  let timer: NodeJS.Timeout | undefined;
  const report = (): void => {
    timer = undefined;
    if (dropped === 0) return;
    const line = `${JSON.stringify({ level: 'warn', time: new Date().toISOString(), pid: process.pid, dropped, msg: 'log lines dropped: the log output did not keep up' })}\n`;
    dropped = 0;
    destination.write(line);
  };
  destination.on('drop', (data: string) => {
    let lines = 0;
    for (let i = data.indexOf('\n'); i !== -1; i = data.indexOf('\n', i + 1)) lines++;
    dropped += lines;
    if (timer === undefined) timer = setTimeout(report, AGGREGATED_LINE_INTERVAL_MS).unref();
  });
}

/** Production log lines are handed to the destination in batches of about this many characters. */
const LOG_BATCH_CHARS = 16 * 1024;
/** Longest time a production log line waits in its batch, in milliseconds. */
const LOG_BATCH_MS = 250;

function flushLogBatch(batch: LogBatcher): void {
  batch.flush();
}

/**
 * Gathers log lines and passes them on to the destination in writes of about {@link LOG_BATCH_CHARS}
 * characters, or {@link LOG_BATCH_MS} after the first line of a batch: one asynchronous write (one
 * hand-off to a libuv pool thread) per batch rather than per line. Lines are joined once, here
 * (the destination's own `minLength` would measure its growing buffer again on every line).
 */
class LogBatcher {
  readonly #destination: { write(text: string): unknown };
  #lines: string[] = [];
  #size = 0;
  #timer: NodeJS.Timeout | undefined;
  #direct = false;
  constructor(destination: { write(text: string): unknown }) {
    this.#destination = destination;
  }
  /** Takes one line (pino's stream interface). */
  write(line: string): boolean {
    if (this.#direct) {
      this.#destination.write(line);
      return true;
    }
    this.#lines.push(line);
    this.#size += line.length;
    if (this.#size >= LOG_BATCH_CHARS) this.flush();
    else if (this.#timer === undefined) this.#timer = setTimeout(flushLogBatch, LOG_BATCH_MS, this).unref();
    return true;
  }
  /** Passes the lines gathered so far on to the destination. */
  flush(): void {
    if (this.#timer !== undefined) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
    }
    if (this.#size === 0) return;
    const lines = this.#lines;
    this.#lines = [];
    this.#size = 0;
    this.#destination.write(lines.length === 1 ? (lines[0] as string) : lines.join(''));
  }
  /** Flushes, and passes every later line on at once (after the app has closed). */
  stop(): void {
    this.flush();
    this.#direct = true;
  }
}

/**
 * pino's timestamp of every line, `,"time":"2025-01-31T12:00:00.000Z"` (docs/operations.md "Logs": ISO
 * 8601, UTC, milliseconds), the same text as `pino.stdTimeFunctions.isoTime`, with the date and time
 * of the second formatted once a second rather than once a line (`Date.prototype.toISOString` was
 * some 40% of a completion line's work): each line only writes its milliseconds after it.
 *
 * @param now - the clock in epoch milliseconds (default `Date.now`).
 * @returns the timestamp function of one logger (it keeps the second it formatted last).
 * @example isoTimeBySecond(() => 1738324800123)() // ',"time":"2025-01-31T12:00:00.123Z"'
 */
export function isoTimeBySecond(now: () => number = () => Date.now()): () => string {
  let second = Number.NaN;
  let prefix = '';
  return () => {
    const time = now();
    const ms = time % 1000;
    const start = time - (ms < 0 ? ms + 1000 : ms);
    if (start !== second) {
      second = start;
      // Everything of the ISO text but its milliseconds and `Z` (`.000Z`, the last 4 characters).
      prefix = `,"time":"${new Date(start).toISOString().slice(0, -4)}`;
    }
    const millis = time - start;
    return `${prefix}${millis < 10 ? '00' : millis < 100 ? '0' : ''}${millis}Z"`;
  };
}

/** Marks a request whose completion line is not written (its step logs an aggregate instead). */
const NO_COMPLETION_LINE = Symbol('no completion line');

/**
 * Leaves out the completion line of `request`: for answers given in bulk under overload (load
 * shedding), whose step writes one aggregated line instead, so that a refusal stays cheap.
 */
export function skipCompletionLine(request: FastifyRequest): void {
  (request as unknown as Record<symbol, boolean>)[NO_COMPLETION_LINE] = true;
}

/** Shortest time between two lines of one {@link AggregatedLine}, in milliseconds. */
export const AGGREGATED_LINE_INTERVAL_MS = 10_000;

/**
 * One warn line for many events of a kind that come in bulk under overload (shed requests, refusals
 * of the upstream guards), instead of a line each: the events are counted by key (a closed set: a
 * reason, a reference), the first is written at once, and the counts since are written at most every
 * {@link AGGREGATED_LINE_INTERVAL_MS} (a timer writes what is left when the events stop).
 *
 * @example
 * const refusals = new AggregatedLine(app.log, 'upstream calls refused since the last line', 'refused');
 * refusals.count('EP0032-EM0032 upstream_busy'); // {"level":"warn","refused":{"EP0032-EM0032 upstream_busy":1},"msg":"upstream calls refused since the last line"}
 */
export class AggregatedLine {
  readonly #log: FastifyBaseLogger;
  readonly #message: string;
  readonly #field: string;
  readonly #counts = new Map<string, number>();
  #last = Number.NEGATIVE_INFINITY;
  #timer: NodeJS.Timeout | undefined;
  /**
   * @param field - the line's field that holds the counts by key.
   */
  constructor(log: FastifyBaseLogger, message: string, field: string) {
    this.#log = log;
    this.#message = message;
    this.#field = field;
  }
  /** Counts one event of `key`; writes the line when the interval since the last one has passed. */
  count(key: string): void {
    this.#counts.set(key, (this.#counts.get(key) ?? 0) + 1);
    if (this.#timer !== undefined) return;
    const wait = this.#last + AGGREGATED_LINE_INTERVAL_MS - performance.now();
    if (wait <= 0) this.flush();
    else this.#timer = setTimeout(() => this.flush(), wait).unref();
  }
  /** Writes the counts gathered so far, if any. */
  flush(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#counts.size === 0) return;
    this.#last = performance.now();
    this.#log.warn({ [this.#field]: Object.fromEntries(this.#counts) }, this.#message);
    this.#counts.clear();
  }
}

/** The trace fields of a request's lines (tracing on): its trace id and, when sampled, its server span's id. */
export interface TraceLogFields {
  /** 32 lower-case hex digits (W3C trace context). */
  readonly trace_id: string;
  /** 16 lower-case hex digits; absent for a request the sampler left out (it has no span). */
  readonly span_id?: string;
}

/** Where a request keeps its {@link TraceLogFields}. */
const TRACE_FIELDS = Symbol('trace log fields');

/**
 * Puts `fields` on every line `request` logs from now on, its completion line included (the tracing
 * step calls it from its first hook, before anything of the request logs).
 */
export function bindTraceFields(request: FastifyRequest, fields: TraceLogFields): void {
  (request as unknown as Record<symbol, TraceLogFields>)[TRACE_FIELDS] = fields;
  const log = request.log as FastifyBaseLogger & { setBindings?: (bindings: LogBindings) => void };
  if (log instanceof LazyRequestLogger) log.bind(fields);
  else log.setBindings?.(fields);
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A health route (`/healthz`, `/readyz`): logged at debug, not timed in the request metrics, not traced. */
    probe?: boolean;
  }
}

/**
 * Whether `request` is a health probe's (`config.probe`) as it completes. The route's config the
 * `onRequest` steps read (`routeConfigOf`, pipeline/request-context.ts) answers when it is no probe's:
 * a request a handler sends on to the not-found handler then has that handler's config, no probe's
 * either. Only a probe's (or an unread config) is read again from Fastify's `request.routeOptions`,
 * which builds an object of a dozen fields on every read.
 */
function isProbe(request: FastifyRequest): boolean {
  const matched = request.matchedRouteConfig;
  if (matched !== undefined && matched.probe !== true) return false;
  return request.routeOptions.config?.probe === true;
}

/**
 * One log line per request, written when it completes (method, path without query, status, time; `ref` for
 * an error answer; the trace fields when tracing is on): at info, at warn for a 5xx answer, at error for
 * an error the handler threw, and at debug for a health probe.
 */
class OneLinePerRequest extends LogController {
  /**
   * Where the completion lines of requests without an error go: a child of the app's logger made once,
   * without redaction, since the line's fields (request id, method, path, status, time) can never match
   * a redacted path. The line is the same as through the request's logger, without a redaction pass
   * per field and without creating that logger.
   */
  lines: FastifyBaseLogger | undefined;
  override incomingRequest(): void {}
  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (!error && (request as unknown as Record<symbol, boolean | undefined>)[NO_COMPLETION_LINE] === true) return;
    const url = request.url;
    const query = url.indexOf('?');
    const path = query === -1 ? url : url.slice(0, query);
    const ms = Math.round(reply.elapsedTime * 100) / 100;
    const statusCode = reply.statusCode;
    // An error answer's reference (pipeline/error-ref.ts), so that a reference a user reads out is found
    // here; `undefined` (no field in the line) below 400.
    const ref = statusCode >= 400 ? reply.getHeader('x-error-ref') : undefined;
    if (error) {
      request.log.error({ method: request.method, url: path, statusCode, ms, ref, err: error }, 'request errored');
      return;
    }
    const level = statusCode >= 500 ? 'warn' : isProbe(request) ? 'debug' : 'info';
    if (this.lines) {
      const trace = (request as unknown as Record<symbol, TraceLogFields | undefined>)[TRACE_FIELDS];
      // The same fields in the same order either way; without tracing, a literal without a spread (a
      // spread makes every field after it a runtime definition, on every line).
      const fields =
        trace === undefined
          ? { reqId: request.id, method: request.method, url: path, statusCode, ms, ref }
          : { reqId: request.id, ...trace, method: request.method, url: path, statusCode, ms, ref };
      this.lines[level](fields, 'request completed');
    } else {
      request.log[level]({ method: request.method, url: path, statusCode, ms, ref }, 'request completed');
    }
  }
}

type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';
type LogMethod = (this: FastifyBaseLogger, ...args: unknown[]) => void;
type LogBindings = Parameters<FastifyBaseLogger['child']>[0];
type ChildOptions = Parameters<FastifyBaseLogger['child']>[1];

/**
 * A request's logger, made on its first use: most requests log nothing but their completion line
 * ({@link OneLinePerRequest}), so the pino child (bindings `{ reqId }`, redaction included) is only
 * built for those that log more.
 */
class LazyRequestLogger implements FastifyBaseLogger {
  readonly #parent: FastifyBaseLogger;
  #bindings: LogBindings;
  readonly #options: ChildOptions;
  #logger: FastifyBaseLogger | undefined;
  constructor(parent: FastifyBaseLogger, bindings: LogBindings, options: ChildOptions) {
    this.#parent = parent;
    this.#bindings = bindings;
    this.#options = options;
  }
  #real(): FastifyBaseLogger {
    if (this.#logger === undefined) this.#logger = this.#parent.child(this.#bindings, this.#options);
    return this.#logger;
  }
  /** Adds `fields` to the bindings of every later line (to the child's, once it is built). */
  bind(fields: LogBindings): void {
    if (this.#logger === undefined) this.#bindings = { ...this.#bindings, ...fields };
    else (this.#logger as FastifyBaseLogger & { setBindings(bindings: LogBindings): void }).setBindings(fields);
  }
  get level(): FastifyBaseLogger['level'] {
    return this.#real().level;
  }
  set level(level: FastifyBaseLogger['level']) {
    this.#real().level = level;
  }
  /** Whether a line at `level` would be written; answered without building the child. */
  #enabled(level: LogLevel): boolean {
    const threshold = this.#logger?.level ?? (this.#options as { level?: string } | undefined)?.level ?? this.#parent.level;
    return (pino.levels.values[level] as number) >= (pino.levels.values[threshold] ?? Number.POSITIVE_INFINITY);
  }
  #log(level: LogLevel, args: unknown[]): void {
    // A line below the level is dropped here: building the child for it (bindings serialised through
    // the redaction) would cost more than the line itself.
    if (!this.#enabled(level)) return;
    const logger = this.#real();
    (logger[level] as LogMethod).apply(logger, args);
  }
  fatal(...args: unknown[]): void {
    this.#log('fatal', args);
  }
  error(...args: unknown[]): void {
    this.#log('error', args);
  }
  warn(...args: unknown[]): void {
    this.#log('warn', args);
  }
  info(...args: unknown[]): void {
    this.#log('info', args);
  }
  debug(...args: unknown[]): void {
    this.#log('debug', args);
  }
  trace(...args: unknown[]): void {
    this.#log('trace', args);
  }
  silent(): void {}
  child(bindings: LogBindings, options?: ChildOptions): FastifyBaseLogger {
    return this.#real().child(bindings, options);
  }
}

/**
 * A `pino-pretty` stream writing to standard output synchronously (lines in order, none lost at
 * exit), or `undefined` when the package is not installed (an install without development
 * packages): the lines are JSON then.
 */
function prettyStream(): Writable | undefined {
  try {
    const require = createRequire(import.meta.url);
    const pretty = require('pino-pretty') as (options: Record<string, unknown>) => Writable;
    return pretty({ colorize: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname', sync: true });
  } catch {
    return undefined;
  }
}

/** How {@link createLogging} chooses where lines go, beyond the configuration. */
export interface LoggingOptions {
  /** Standard output is a terminal (pretty lines outside production); default `process.stdout.isTTY`. */
  terminal?: boolean;
}

/** The logging of one app: Fastify constructor options and the plugin that completes them. */
export interface Logging {
  readonly options: Pick<FastifyServerOptions, 'logger' | 'logController' | 'childLoggerFactory'>;
  readonly plugin: FastifyPluginAsync;
}

/**
 * The logging of an app. Log lines go to `logStream` when given; else, in production, to standard
 * output through an asynchronous pino destination (a request never waits for a write), batched and
 * written out at close and at process exit; else, when standard output is a terminal, pretty-printed
 * to it; else synchronously to standard output as JSON.
 *
 * @example
 * const logging = createLogging(config); // pretty on a terminal in development, JSON otherwise
 * const app = Fastify({ ...logging.options });
 * await app.register(logging.plugin);
 */
export function createLogging(
  config: Pick<Config, 'logLevel' | 'production'>,
  logStream?: Writable,
  options: LoggingOptions = {},
): Logging {
  const asyncLog =
    logStream || !config.production ? undefined : pino.destination({ dest: 1, sync: false, maxLength: LOG_BUFFER_MAX_BYTES });
  if (asyncLog) watchDroppedLines(asyncLog);
  const batch = asyncLog ? new LogBatcher(asyncLog) : undefined;
  const terminal = options.terminal ?? process.stdout.isTTY === true;
  const pretty = !logStream && !config.production && terminal ? prettyStream() : undefined;
  const flushLogs = (): void => {
    batch?.flush();
    try {
      asyncLog?.flushSync();
    } catch {
      // not open yet or already closed: nothing to flush
    }
  };
  const destination = scrubbing(logStream ?? batch ?? pretty ?? pino.destination({ dest: 1, sync: true }));
  const controller = new OneLinePerRequest();
  const plugin = async (app: FastifyInstance): Promise<void> => {
    controller.lines = app.log.child({}, { redact: [] });
    if (asyncLog) process.on('exit', flushLogs);
    // Registered first, so its close hook runs last: lines logged while the app closes are kept.
    app.addHook('onClose', async () => {
      batch?.stop();
      flushLogs();
      process.removeListener('exit', flushLogs);
    });
  };
  return {
    options: {
      logger: {
        level: config.logLevel,
        // docs/operations.md "Logs": `"level":"warn"`, `"time":"2025-01-31T12:00:00.000Z"` (UTC, ms).
        formatters: { level: (label: string) => ({ level: label }) },
        timestamp: isoTimeBySecond(),
        redact: { paths: LOG_REDACT_PATHS, censor: '[redacted]' },
        serializers: {
          req: (req: { method: string; url: string; id: string }) => ({ method: req.method, url: req.url.split('?')[0], id: req.id }),
          res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
        },
        stream: destination,
      },
      logController: controller,
      childLoggerFactory: (logger, bindings, options) => new LazyRequestLogger(logger, bindings, options),
    },
    plugin: fp(plugin, { name: 'logging' }),
  };
}
