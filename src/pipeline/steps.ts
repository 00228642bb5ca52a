/**
 * The steps a proxy process can be built without, **for measurement only**: the instruction bench's
 * ledger (bench/README.md "What each step costs") builds the app with one of them left out at a time
 * (`ServerOptions.omitSteps` of `createServer`) to count what that step costs a request. A proxy
 * without a step is not a supported deployment: no configuration variable reaches this switch, and
 * `server.ts` never sets it.
 *
 * Each row says what the app leaves out when the step is named; the order is the request's
 * (docs/architecture.md "One request, step by step").
 *
 * @module
 */

/** What each omittable step leaves out of the app, by its name. */
export const PIPELINE_STEPS = {
  'request-context': "the request id from X-Request-Id (Fastify's own counter instead) and the headers every answer starts with",
  logging: 'the logger itself (Fastify without one): the request log lines and every other line',
  metrics: 'the request metrics and every observer reporting to them (no METRICS_PORT server)',
  drain: "the drain's hooks (a SIGTERM closes the app at once)",
  'load-shedding': 'the in-flight count and the event-loop delay refusals',
  csrf: 'the CSRF defence of state-changing requests and side-effecting reads',
  'session-cookie': 'the onSend hook that writes a session cookie a route asked for',
  'auth-gate':
    "the session checks and refusals: the session cookie's value is taken as the session token unchecked (not well-formed, not verified, no digest, no 401), so that the upstream call still carries it",
  body: "the JSON body parser's limits (Fastify's own parser instead)",
  'rate-limits': 'every rate limit (@fastify/rate-limit and the per-address ceiling)',
  errors: "the error handler and the 404 handler (Fastify's own instead)",
  'always-succeeds': "the onSend hook that turns a logout's refusal into its success",
  'error-ref': 'the X-Error-Ref header of error answers',
  'upstream-guard': "every endpoint's guard: bulkhead, circuit breaker, retry budget",
  'answer-json-check': "the JSON check of a data row's 2xx answer (its body is passed on as it came)",
  'secret-scan': "the scan of answers for the session cookie's values (nothing is redacted)",
} as const;

/** The name of a step {@link PIPELINE_STEPS} lists. */
export type PipelineStepName = keyof typeof PIPELINE_STEPS;

/** Every step name, in the request's order. */
export const PIPELINE_STEP_NAMES = Object.keys(PIPELINE_STEPS) as readonly PipelineStepName[];

/**
 * The step names of a comma-separated list (blanks around names ignored, an empty list is none).
 *
 * @example pipelineSteps('csrf, rate-limits') // Set { 'csrf', 'rate-limits' }
 * @throws Error naming the unknown names and the known ones, when a name is not in {@link PIPELINE_STEPS}.
 */
export function pipelineSteps(list: string): ReadonlySet<PipelineStepName> {
  const names = list
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name.length > 0);
  const unknown = names.filter((name) => !Object.hasOwn(PIPELINE_STEPS, name));
  if (unknown.length > 0) throw new Error(`unknown pipeline step ${unknown.join(', ')} (known: ${PIPELINE_STEP_NAMES.join(', ')})`);
  return new Set(names as PipelineStepName[]);
}
