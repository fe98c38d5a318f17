import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { Bootstrapper } from './bootstrap.ts';
import { eventually } from './network-port-suite.ts';
import type { PeerEvent } from './network-port.ts';

const PEER = 'a'.repeat(64);

/** A network that fails or accepts dials on demand, with a clock and sleeps the test controls. */
function fakeNet() {
  const listeners = new Set<(e: PeerEvent) => void>();
  const net = {
    connected: false,
    failing: true,
    dials: 0,
    clock: 0,
    /** every backoff asked for, in ms */
    sleeps: [] as number[],
    emit(type: PeerEvent['type']) {
      net.connected = type === 'connected';
      for (const l of [...listeners]) l({ type, peer: PEER });
    },
    deps: {
      dial: async (_address: string, signal: AbortSignal) => {
        net.dials++;
        signal.throwIfAborted();
        if (net.failing) throw new Error('connection refused');
        net.emit('connected');
        return PEER;
      },
      connected: () => net.connected,
      onPeer: (l: (e: PeerEvent) => void) => {
        listeners.add(l);
        return () => listeners.delete(l);
      },
      log: pino({ level: 'silent' }),
      random: () => 0.5, // no jitter
      now: () => net.clock,
      sleep: async (ms: number) => {
        net.sleeps.push(ms);
        await new Promise((r) => setImmediate(r));
      },
    },
  };
  return net;
}

const policy = { initialMs: 1_000, maxMs: 60_000, dialTimeoutMs: 1_000, stableMs: 10_000 };

describe('Bootstrapper', () => {
  it('keeps a peer added after start (network.keep), once per address', async () => {
    const net = fakeNet();
    net.failing = false;
    const b = new Bootstrapper([], net.deps, policy);
    b.start();
    b.add({ address: '/later', peer: PEER });
    b.add({ address: '/later', peer: PEER });
    await eventually(() => net.connected, 'the added peer connected');
    net.emit('disconnected');
    await eventually(() => net.dials === 2 && net.connected, 'a redial after the disconnection');
    await b.stop();
    expect(net.dials).toBe(2);
  });

  it('redials with backoff doubling from 1 s to 60 s while the peer is unreachable', async () => {
    const net = fakeNet();
    const b = new Bootstrapper([{ address: '/x', peer: PEER }], net.deps, policy);
    b.start();
    await eventually(() => net.sleeps.length >= 9, 'nine failed dials');
    await b.stop();
    expect(net.sleeps.slice(0, 9)).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 60_000, 60_000, 60_000]);
  });

  it('spreads redials by up to ±20 %', async () => {
    for (const [r, first] of [[0, 800], [0.999999, 1_200]] as const) {
      const net = fakeNet();
      const b = new Bootstrapper([{ address: '/x' }], { ...net.deps, random: () => r }, policy);
      b.start();
      await eventually(() => net.sleeps.length >= 1, 'a failed dial');
      await b.stop();
      expect(net.sleeps[0]).toBe(first);
    }
  });

  it('waits while connected, redials at once after a stable connection drops, backs off after a short one', async () => {
    const net = fakeNet();
    net.failing = false;
    const b = new Bootstrapper([{ address: '/x' }], net.deps, policy);
    b.start();
    await eventually(() => net.dials === 1, 'the first dial');
    net.clock += 10_000; // a stable connection
    net.emit('disconnected');
    await eventually(() => net.dials === 2, 'the redial');
    expect(net.sleeps).toEqual([]);
    net.clock += 5; // accepted, then hung up at once
    net.emit('disconnected');
    await eventually(() => net.dials === 3, 'the next redial');
    expect(net.sleeps).toEqual([1_000]);
    await b.stop();
  });

  it('counts a relayed connection cut after a second as stable (relay limits end circuits), a direct one not', async () => {
    for (const [address, expected] of [
      ['/ip4/1.2.3.4/tcp/1/p2p/R/p2p-circuit/p2p/A', []],
      ['/ip4/1.2.3.4/tcp/1/p2p/A', [1_000, 2_000, 4_000]],
    ] as const) {
      const net = fakeNet();
      net.failing = false;
      const b = new Bootstrapper([{ address }], net.deps, policy);
      b.start();
      await eventually(() => net.dials === 1, 'the first dial');
      for (let cut = 1; cut <= 3; cut++) {
        net.clock += 2_000; // a circuit that carried a batch for 2 s, then the relay cut it
        net.emit('disconnected');
        await eventually(() => net.dials === cut + 1, 'the redial');
      }
      // relayed: no backoff after any of the three cuts; direct: doubling, as for a peer hanging up
      expect(net.sleeps).toEqual(expected);
      await b.stop();
    }
  });

  it('counts a connection the network saw make progress as stable however short (a 256 KiB circuit spent in 100 ms)', async () => {
    const net = fakeNet();
    net.failing = false;
    const b = new Bootstrapper([{ address: '/ip4/1.2.3.4/tcp/1/p2p/R/p2p-circuit/p2p/A', peer: PEER }], net.deps, policy);
    b.start();
    await eventually(() => net.dials === 1, 'the first dial');
    for (let cut = 1; cut <= 3; cut++) {
      net.clock += 100; // far below the 1 s a relayed connection needs to count as stable
      b.progressed(PEER); // the relay cut it at its data limit
      net.emit('disconnected');
      await eventually(() => net.dials === cut + 1, 'the redial');
    }
    expect(net.sleeps).toEqual([]); // redialed at once after every cut
    net.clock += 100;
    net.emit('disconnected'); // a short connection without progress: the peer hung up
    await eventually(() => net.dials === 5, 'the redial after a hang-up');
    expect(net.sleeps).toEqual([1_000]); // the third cut's progress did not carry over to this connection
    await b.stop();
  });

  it('ignores progress of a peer it is not waiting on', async () => {
    const net = fakeNet();
    const b = new Bootstrapper([{ address: '/x', peer: PEER }], net.deps, policy);
    b.progressed('b'.repeat(64));
    b.progressed(undefined);
    b.start();
    await eventually(() => net.sleeps.length >= 1, 'a failed dial');
    b.progressed(PEER); // not connected: no loop waits on its disconnection
    net.failing = false;
    await eventually(() => net.dials >= 2 && net.connected, 'connected');
    net.clock += 100;
    net.emit('disconnected');
    await eventually(() => net.sleeps.length >= 2, 'the backoff after a short connection');
    expect(net.sleeps.slice(0, 2)).toEqual([1_000, 2_000]);
    await b.stop();
  });

  it('stops at once, whatever it was waiting on', async () => {
    const net = fakeNet();
    const { sleep: _fake, ...realSleep } = net.deps;
    const b = new Bootstrapper([{ address: '/x' }], realSleep, { ...policy, initialMs: 60_000 });
    b.start();
    await eventually(() => net.dials === 1, 'the first dial');
    const t = Date.now();
    await b.stop(); // it was in a real 60 s sleep
    expect(Date.now() - t).toBeLessThan(5_000);
  });
});
