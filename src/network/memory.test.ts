import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { networkPortSuite } from './network-port-suite.ts';
import { MemoryHub, type MemoryNetwork } from './memory.ts';
import { DEFAULT_BAN_POLICY } from './penalties.ts';

const key = () => randomBytes(32).toString('hex');

networkPortSuite(
  'MemoryNetwork',
  () => {
    const hub = new MemoryHub();
    return {
      nodes: async (n) => Array.from({ length: n }, () => hub.join(key())),
      stop: async (net) => hub.leave(net.self),
      deadAddress: () => `/memory/${key()}`,
      teardown: async () => undefined,
      banThreshold: DEFAULT_BAN_POLICY.threshold,
    };
  },
  20,
);

const A = 'a'.repeat(64);
const B = 'b'.repeat(64);
const C = 'c'.repeat(64);

describe('MemoryHub', () => {
  it('links every pair, partitions and heals', async () => {
    const hub = new MemoryHub();
    const [a, b, c] = [A, B, C].map((k) => hub.join(k)) as [MemoryNetwork, MemoryNetwork, MemoryNetwork];
    hub.linkAll();
    expect(a.peers().sort()).toEqual([B, C]);
    hub.partition([A], [B, C]);
    expect(a.peers()).toEqual([]);
    expect(b.peers()).toEqual([C]);
    b.subscribe('t', () => undefined);
    expect(await a.publish('t', new Uint8Array(1))).toBe(0);
    hub.link(A, B);
    expect(a.topicPeers('t')).toEqual([B]);
    expect(c.status().connections).toMatchObject([{ peer: B, direction: 'inbound' }]);
  });

  it('keeps every penalty, with its detail, for domain tests to assert on', () => {
    const hub = new MemoryHub();
    const a = hub.join(A);
    a.penalize(B, 'replay', 'op 7 again');
    expect(a.penalties).toEqual([{ peer: B, reason: 'replay', detail: 'op 7 again' }]);
  });

  it('lifts a ban when it expires', async () => {
    const hub = new MemoryHub();
    const a = hub.join(A, { banPolicy: { threshold: 2, windowMs: 60_000, banMs: 30 } });
    hub.join(B);
    hub.link(A, B);
    a.penalize(B, 'unauthorized');
    a.penalize(B, 'unauthorized');
    expect(hub.linked(A, B)).toBe(false);
    expect(hub.link(B, A)).toBe(false);
    await new Promise((r) => setTimeout(r, 40));
    expect(hub.link(B, A)).toBe(true);
  });
});

describe('MemoryNetwork content routing', () => {
  const KEY = 'cd'.repeat(32);
  it('refuses to announce without a DHT or a peer, forgets on unprovide, and stops at max records', async () => {
    const hub = new MemoryHub();
    const [a, b] = [A, B].map((k) => hub.join(k)) as [MemoryNetwork, MemoryNetwork];
    const off = hub.join(C, { dht: false });
    await expect(a.provide(KEY)).rejects.toMatchObject({ kind: 'unreachable' }); // no peer to take the record
    await expect(off.provide(KEY)).rejects.toMatchObject({ kind: 'unsupported' });
    hub.link(A, B);
    await a.provide(KEY);
    const seen = async (n: MemoryNetwork, max = 10) => {
      const out: string[] = [];
      for await (const p of n.findProviders(KEY, { timeoutMs: 1_000, max })) out.push(p);
      return out;
    };
    expect(await seen(b)).toEqual([A]);
    expect(await seen(a)).toEqual([]); // never itself
    for (let i = 0; i < 20; i++) hub.providers.get(KEY)!.add(randomBytes(32).toString('hex')); // bogus records
    expect((await seen(b, 5)).length).toBe(5);
    await a.unprovide(KEY);
    expect(await seen(b, 100)).not.toContain(A);
    hub.link(C, B);
    expect(await seen(off)).toEqual([]); // no DHT: nothing found
  });
});
