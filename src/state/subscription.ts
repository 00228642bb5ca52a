/**
 * A subscription that outlives its connection's reconnections (docs/behaviour.md "Several
 * instances": the fleet's events; the sentinels' `+switch-master`).
 *
 * ioredis subscribes again by itself on a new connection (`autoResubscribe`), but it sends that
 * `SUBSCRIBE` without a handler and records the channel only once the server confirms it: a
 * connection lost between its `ready` and that reply (a failover, a switch of primary closing it
 * again at once) leaves the client subscribed to nothing for good, and the command's rejection
 * unhandled. The client is made with `autoResubscribe: false` and subscribed here on every `ready`.
 *
 * @module
 */
import type { Redis } from 'ioredis';

/**
 * Subscribes `client` (made with `autoResubscribe: false`) to `channel` on every `ready`, and calls
 * `onSubscribed` each time the server confirmed it. A `SUBSCRIBE` that fails on a connection still
 * ready (the server refused it) reconnects, so that the next `ready` tries again; one lost with its
 * connection is sent again by the next `ready`.
 */
export function keepSubscribed(client: Redis, channel: string, onSubscribed: () => void): void {
  client.on('ready', () => {
    client.subscribe(channel).then(onSubscribed, () => {
      if (client.status === 'ready') client.disconnect(true);
    });
  });
}
