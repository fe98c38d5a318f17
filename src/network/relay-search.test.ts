/**
 * The bounded relay search (relay-search.ts): a fake random walk that finds peers as fast as it is
 * asked (as libp2p's walk does on a network without relays) yields at most a round's worth, then
 * nothing during the back-off, which doubles; the walk ends when its signal aborts.
 */
import { describe, expect, it } from 'vitest';
import { boundedWalk, type RandomWalk, type RelaySearchCounts } from './relay-search.ts';

/** a walk that finds a peer every `everyMs`, and counts how many walks run at once */
function fakeWalk(everyMs: number): RandomWalk & { live: number; asked: number } {
  const w = {
    live: 0,
    asked: 0,
    async *walk(options?: { signal?: AbortSignal }) {
      w.live++;
      try {
        for (;;) {
          await new Promise((r) => setTimeout(r, everyMs));
          options?.signal?.throwIfAborted();
          w.asked++;
          yield { id: w.asked };
        }
      } finally {
        w.live--;
      }
    },
  };
  return w;
}

describe('the bounded relay search', () => {
  it('yields a round of peers, stops the inner walk during the back-off, then walks again with a longer back-off', async () => {
    const inner = fakeWalk(1);
    const counts: RelaySearchCounts = { rounds: 0, peers: 0 };
    const stop = new AbortController();
    const walk = boundedWalk(inner, { peersPerRound: 5, roundMs: 5_000, firstBackoffMs: 300, maxBackoffMs: 600 }, counts);
    const times: number[] = [];
    const t0 = Date.now();
    const consumer = (async () => {
      try {
        for await (const _ of walk.walk({ signal: stop.signal })) times.push(Date.now() - t0);
      } catch {
        // aborted: the end of this test
      }
    })();
    await new Promise((r) => setTimeout(r, 150));
    expect(times).toHaveLength(5); // one round's worth, well before the back-off ends
    expect(inner.live).toBe(0); // the inner walk stopped with the round
    await new Promise((r) => setTimeout(r, 400)); // past the first back-off (300 ms)
    expect(times).toHaveLength(10);
    expect(times[5]! - times[4]!).toBeGreaterThanOrEqual(290);
    await new Promise((r) => setTimeout(r, 200)); // within the second back-off (600 ms, from about 320 ms)
    expect(times).toHaveLength(10);
    stop.abort();
    await consumer;
    expect(counts).toEqual({ rounds: 2, peers: 10 });
    expect(inner.live).toBe(0);
  });

  it('ends a round that finds nothing at its time bound, and a walk that fails waits for the next round', async () => {
    const silent: RandomWalk & { started: number } = {
      started: 0,
      async *walk(options) {
        silent.started++;
        await new Promise((_, reject) => options?.signal?.addEventListener('abort', () => reject(options.signal!.reason)));
      },
    };
    const stop = new AbortController();
    const walk = boundedWalk(silent, { peersPerRound: 5, roundMs: 50, firstBackoffMs: 100, maxBackoffMs: 100 });
    const done = (async () => {
      try {
        for await (const _ of walk.walk({ signal: stop.signal })) expect.unreachable();
      } catch {
        // aborted
      }
    })();
    await new Promise((r) => setTimeout(r, 500));
    stop.abort();
    await done;
    // rounds of 50 ms + 100 ms pauses in 500 ms: about four, never a spin
    expect(silent.started).toBeGreaterThanOrEqual(3);
    expect(silent.started).toBeLessThanOrEqual(5);

    let failures = 0;
    const failing: RandomWalk = {
      // eslint-disable-next-line require-yield
      async *walk() {
        failures++;
        throw new Error('no peer routers');
      },
    };
    const stop2 = new AbortController();
    const done2 = (async () => {
      try {
        for await (const _ of boundedWalk(failing, { peersPerRound: 5, roundMs: 50, firstBackoffMs: 100, maxBackoffMs: 100 }).walk({ signal: stop2.signal })) expect.unreachable();
      } catch {
        // aborted
      }
    })();
    await new Promise((r) => setTimeout(r, 250));
    stop2.abort();
    await done2;
    expect(failures).toBeGreaterThanOrEqual(2);
    expect(failures).toBeLessThanOrEqual(4);
  });
});
