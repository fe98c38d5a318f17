/**
 * A bounded relay search (issue #24, noted: "a private node in a network without any relay keeps
 * libp2p's relay search running"; docs/network.md "Relay limits and abuse").
 *
 * Once a node listens on `/p2p-circuit` and holds fewer reservations than it wants, libp2p's relay
 * transport walks the network at random (`components.randomWalk`, DHT queries for random keys, one
 * after another) until it finds a relay. Where no relay exists the walk never ends: a DHT query
 * every few milliseconds for the life of the node. This wraps the transport so its walk comes in
 * rounds: a round ends after `peersPerRound` peers or `roundMs`, whichever first, and the next
 * starts after a back-off that doubles from `firstBackoffMs` up to `maxBackoffMs`. Between rounds
 * the underlying walk is stopped (its last walker left), so an idle private node costs nothing.
 * Relays already known (configured, connected, in the peer store) are tried by the transport
 * without the walk, so the bound delays only the search among strangers.
 */
import './polyfill.ts';
import { circuitRelayTransport } from '@libp2p/circuit-relay-v2';

export interface RelaySearchPolicy {
  /** peers the walk may yield in one round */
  peersPerRound: number;
  /** how long one round may last */
  roundMs: number;
  firstBackoffMs: number;
  maxBackoffMs: number;
}

/** docs/network.md "Relay limits and abuse"; decisions.md records why these figures */
export const DEFAULT_RELAY_SEARCH: RelaySearchPolicy = { peersPerRound: 20, roundMs: 10_000, firstBackoffMs: 30_000, maxBackoffMs: 30 * 60_000 };

/** the part of libp2p's random walk the relay transport uses */
export interface RandomWalk {
  walk(options?: { signal?: AbortSignal }): AsyncGenerator<{ id: unknown }>;
}

/** What the bounded search did (for tests and the bench). */
export interface RelaySearchCounts {
  rounds: number;
  peers: number;
}

/** sleeps `ms`, or until `signal` aborts (then throws its reason) */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', aborted);
    };
    const aborted = () => {
      done();
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      done();
      resolve();
    }, ms);
    signal.addEventListener('abort', aborted, { once: true });
  });
}

/**
 * The random walk in rounds with back-off: the same peers the inner walk finds, at most
 * `peersPerRound` per round, nothing in between. Ends when `options.signal` aborts.
 */
export function boundedWalk(inner: RandomWalk, policy: RelaySearchPolicy = DEFAULT_RELAY_SEARCH, counts: RelaySearchCounts = { rounds: 0, peers: 0 }): RandomWalk {
  return {
    async *walk(options) {
      const outer = options?.signal ?? new AbortController().signal;
      let backoff = policy.firstBackoffMs;
      while (!outer.aborted) {
        counts.rounds++;
        const round = AbortSignal.any([outer, AbortSignal.timeout(policy.roundMs)]);
        let found = 0;
        try {
          for await (const peer of inner.walk({ signal: round })) {
            counts.peers++;
            yield peer;
            if (++found >= policy.peersPerRound) break; // leaving the loop stops the inner walk
          }
        } catch (err) {
          if (outer.aborted) throw err;
          // the round's time ran out, or the walk failed (no peer routing): both wait for the next round
        }
        await sleep(backoff, outer);
        backoff = Math.min(backoff * 2, policy.maxBackoffMs);
      }
    },
  };
}

/**
 * libp2p's circuit relay transport, whose relay search walks in bounded rounds: the transport
 * sees `components.randomWalk` as `boundedWalk` of the node's own.
 */
export function boundedRelayTransport(
  init: Parameters<typeof circuitRelayTransport>[0],
  policy: RelaySearchPolicy = DEFAULT_RELAY_SEARCH,
  counts?: RelaySearchCounts,
): ReturnType<typeof circuitRelayTransport> {
  const inner = circuitRelayTransport(init);
  return ((components: { randomWalk: RandomWalk }) => {
    let walk: RandomWalk | undefined;
    const seen = new Proxy(components, {
      get: (target, k, receiver) => {
        if (k !== 'randomWalk') return Reflect.get(target, k, receiver);
        walk ??= boundedWalk(target.randomWalk, policy, counts);
        return walk;
      },
    });
    return inner(seen as never);
  }) as ReturnType<typeof circuitRelayTransport>;
}
