/**
 * {@link useLiveFeed}: a live feed of the sportsbook passthrough (`client.sports.live` of `@front-proxy/browser`)
 * as React state — its status, its last event and why it ended. Opened in an effect, so server-side
 * rendering gives `idle` and touches nothing; closed when the component unmounts or `subPath`
 * changes. A `session-ended` runs the client's forced-logout flow (once per browser), which
 * `useSession` then shows.
 *
 * @example
 * const { status, lastEvent } = useLiveFeed('live/odds?sport=football');
 * const odds = lastEvent ? JSON.parse(lastEvent.data) : null;
 *
 * @module
 */
import type { LiveEndReason, LiveEvent } from '@front-proxy/browser';
import { useEffect, useState } from 'react';
import { useProxyClient } from './hooks.js';

/** What {@link useLiveFeed} returns. */
export interface LiveFeedState {
  /** `idle` (not opened: no sub-path, or rendering on the server), `connecting`, `open`, `retrying`, `ended`. */
  readonly status: 'idle' | 'connecting' | 'open' | 'retrying' | 'ended';
  /** The last event received, `null` before the first. */
  readonly lastEvent: LiveEvent | null;
  /** Why the feed ended (`session_ended`, `unsupported`), `null` while it runs. */
  readonly error: LiveEndReason | null;
}

const IDLE: LiveFeedState = { status: 'idle', lastEvent: null, error: null };

/**
 * Follows `subPath` (below `/api/core-sportbook/`, with its query) while the component is mounted;
 * `null` opens nothing. Must be used inside `<ProxySessionProvider>`.
 *
 * @param options.types - event types to deliver besides `message`.
 */
export function useLiveFeed(subPath: string | null, options: { types?: readonly string[] } = {}): LiveFeedState {
  const client = useProxyClient();
  const [state, setState] = useState<LiveFeedState>(IDLE);
  const types = (options.types ?? []).join(',');
  useEffect(() => {
    if (subPath === null) {
      setState(IDLE);
      return undefined;
    }
    const controller = new AbortController();
    setState({ status: 'connecting', lastEvent: null, error: null });
    client.sports.live(subPath, {
      signal: controller.signal,
      types: types === '' ? [] : types.split(','),
      onEvent: (event) => setState({ status: 'open', lastEvent: event, error: null }),
      onStatus: (status) => setState((previous) => ({ ...previous, status })),
      onEnd: (reason) => {
        if (reason !== 'aborted') setState((previous) => ({ ...previous, status: 'ended', error: reason }));
      },
    });
    return () => controller.abort();
  }, [client, subPath, types]);
  return state;
}
