import './polyfill.ts';
import { multiaddr, type Multiaddr } from '@multiformats/multiaddr';
import { describe, expect, it } from 'vitest';
import type { Connection } from '@libp2p/interface';
import { boundListenAddress, ProvedAddress, RelayedAllowance, type InternetComponents } from './internet.ts';
import type { AutonatStatus } from './reachability.ts';

function fakeComponents() {
  const confirmed: string[] = [];
  const removed: string[] = [];
  const components: InternetComponents = {
    transportManager: { listen: async () => undefined, getAddrs: () => [] },
    addressManager: {
      confirmObservedAddr: (a: Multiaddr, o?: { type?: string; ttl?: number }) => {
        expect(o?.type).toBe('observed');
        expect(o?.ttl).toBeGreaterThan(0);
        confirmed.push(a.toString());
      },
      removeObservedAddr: (a: Multiaddr) => removed.push(a.toString()),
    },
  };
  return { components, confirmed, removed };
}

const answer = (result: AutonatStatus['lastTestResult'], observed: string | null): AutonatStatus => ({
  reachability: 'unknown',
  lastTestAddr: observed,
  lastTestResult: result,
  lastTestReason: null,
  lastTestObservedAddr: observed,
  lastTestAt: 1,
});

describe('the address the dial-back probe proved is advertised', () => {
  it('confirms it on a public verdict whose newest answer reached this node, replaces it when it changes, withdraws it when private', () => {
    const { components, confirmed, removed } = fakeComponents();
    const p = new ProvedAddress();
    p.update(components, 'public', answer('reachable', '/ip4/11.77.1.11/tcp/2428'));
    expect(confirmed).toEqual(['/ip4/11.77.1.11/tcp/2428']);
    p.update(components, 'public', answer('reachable', '/ip4/11.77.1.11/tcp/2428')); // the same again: confirmed again (a fresh TTL), nothing removed
    expect(removed).toEqual([]);
    p.update(components, 'public', answer('reachable', '/ip4/11.77.9.9/tcp/2428')); // the router got a new address
    expect(removed).toEqual(['/ip4/11.77.1.11/tcp/2428']);
    expect(confirmed.at(-1)).toBe('/ip4/11.77.9.9/tcp/2428');
    p.update(components, 'private', answer('unreachable', '/ip4/11.77.9.9/tcp/2428'));
    expect(removed).toEqual(['/ip4/11.77.1.11/tcp/2428', '/ip4/11.77.9.9/tcp/2428']);
    p.update(components, 'private', answer('unreachable', '/ip4/11.77.9.9/tcp/2428')); // nothing left to withdraw
    expect(removed).toHaveLength(2);
  });

  it('confirms nothing on an unknown verdict, on a public verdict whose newest answer failed or erred, or before libp2p handed its components over', () => {
    const { components, confirmed, removed } = fakeComponents();
    const p = new ProvedAddress();
    p.update(components, 'unknown', answer('reachable', '/ip4/11.77.1.11/tcp/2428'));
    p.update(components, 'public', answer('unreachable', '/ip4/11.77.1.11/tcp/2428')); // the majority says public, the newest did not reach
    p.update(components, 'public', answer('error', null));
    p.update(undefined, 'public', answer('reachable', '/ip4/11.77.1.11/tcp/2428'));
    expect(confirmed).toEqual([]);
    expect(removed).toEqual([]);
  });

  it('reports the configured listen address with the port bound, relayed addresses aside', () => {
    const listen = multiaddr('/ip4/10.77.1.2/tcp/0');
    expect(boundListenAddress(listen, [multiaddr('/ip4/10.77.1.2/tcp/40123')])).toEqual(['/ip4/10.77.1.2/tcp/40123']);
    const relayed = multiaddr('/ip4/11.77.1.1/tcp/2428/p2p/12D3KooWEfmoTK7TsLKnKCYbdDmmTr6Ek1eBCCkBL1LCnrYTjgbN/p2p-circuit');
    expect(boundListenAddress(listen, [relayed, multiaddr('/ip4/10.77.1.2/tcp/40123')])).toEqual(['/ip4/10.77.1.2/tcp/40123']);
    expect(boundListenAddress(listen, [relayed])).toEqual([]);
    expect(boundListenAddress(listen, [])).toEqual([]);
  });
});

describe('a relayed connection that used up its data allowance', () => {
  const RELAYED = '/ip4/11.77.1.1/tcp/2428/p2p/12D3KooWEfmoTK7TsLKnKCYbdDmmTr6Ek1eBCCkBL1LCnrYTjgbN/p2p-circuit/p2p/12D3KooWEfmoTK7TsLKnKCYbdDmmTr6Ek1eBCCkBL1LCnrYTjgbN';
  /** a connection whose `limits.bytes` counts down as libp2p's relay transport does */
  const conn = (address: string, bytes: bigint | undefined) => {
    const limits = bytes === undefined ? undefined : { bytes };
    const c = { remoteAddr: multiaddr(address), limits } as unknown as Connection;
    return { c, use: (n: bigint) => (limits!.bytes! -= n) };
  };

  it('is spent once half its allowance or more is used, not before', () => {
    const a = new RelayedAllowance();
    const { c, use } = conn(RELAYED, 256n * 1024n);
    a.opened(c);
    use(100n * 1024n);
    expect(a.spent(c)).toBe(false); // closed after 100 KiB of 256: a peer that hung up, not the relay's cut
    use(28n * 1024n);
    expect(a.spent(c)).toBe(true); // 128 KiB of 256
    use(120n * 1024n);
    expect(a.spent(c)).toBe(true); // cut a message short of the limit (the far end never saw the last one)
  });

  it('is never spent for a connection without a data limit, a direct one, one with no allowance, or one it was not told opened', () => {
    const a = new RelayedAllowance();
    const unlimited = conn(RELAYED, undefined);
    a.opened(unlimited.c);
    expect(a.spent(unlimited.c)).toBe(false);
    const direct = conn('/ip4/11.77.1.11/tcp/2428', undefined);
    a.opened(direct.c);
    expect(a.spent(direct.c)).toBe(false);
    const nothing = conn(RELAYED, 0n); // libp2p's tracker reads 0 as no limit
    a.opened(nothing.c);
    expect(a.spent(nothing.c)).toBe(false);
    const unseen = conn(RELAYED, 1024n);
    unseen.use(1024n);
    expect(a.spent(unseen.c)).toBe(false);
  });
});
