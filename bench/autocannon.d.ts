/**
 * The part of autocannon's programmatic API the benchmark uses (the package ships no types).
 *
 * @module
 */
declare module 'autocannon' {
  namespace autocannon {
    /** A request as `setupRequest` receives and returns it. */
    interface Request {
      method?: string;
      path?: string;
      headers?: Record<string, string>;
      body?: string | Buffer;
    }
    interface Options {
      url: string;
      method?: string;
      headers?: Record<string, string>;
      body?: string | Buffer;
      connections?: number;
      /** Seconds. */
      duration?: number;
      /** Seconds. */
      timeout?: number;
      requests?: { setupRequest?: (request: Request) => Request }[];
    }
    /** Latency figures, in milliseconds. */
    interface Histogram {
      average: number;
      p50: number;
      p99: number;
      max: number;
      total: number;
    }
    interface Result {
      /** Seconds. */
      duration: number;
      requests: Histogram;
      latency: Histogram;
      errors: number;
      timeouts: number;
      non2xx: number;
      '2xx': number;
      '3xx': number;
      '4xx': number;
      '5xx': number;
    }
  }
  function autocannon(options: autocannon.Options): Promise<autocannon.Result>;
  export default autocannon;
}
