import { describe, expect, it } from 'vitest';
import type { NetworkStatus } from '../../../src/client/index.ts';
import { banActive, classifyTopic, networkSummary, reachabilityMeaning, readNetworkStatus } from './network-status.ts';

const CTX = 'ab'.repeat(32);
const NS = 'cd'.repeat(32);
const PEER = '12D3KooWExamplePeerId';

const status = (over: Record<string, unknown> = {}): NetworkStatus => ({
  localPeerId: PEER,
  listenAddrs: ['/ip4/127.0.0.1/tcp/4001'],
  externalAddrs: [`/ip4/127.0.0.1/tcp/4001/p2p/${PEER}`],
  standalone: false,
  connections: [],
  topics: [],
  bytes: { in: 10, out: 20 },
  gossip: { in: 1, out: 2, dropped: 0 },
  requests: { in: 3, out: 4, refused: 1 },
  penalties: { malformed: 0, oversized: 2, unsupported_protocol: 5 },
  banned: [],
  ...over,
});

const conn = (peerKey: string, remoteAddr = '/ip4/127.0.0.1/tcp/5000') => ({ peerId: `id-${peerKey}`, peerKey, remoteAddr, direction: 'inbound', openedAt: '2026-01-01T00:00:00.000Z' });

describe('readNetworkStatus', () => {
  it('keeps the fields the page shows, penalties above 0 only, most frequent first, topics by name', () => {
    const view = readNetworkStatus(status({ topics: [{ topic: `ns/${NS}`, peers: 1 }, { topic: CTX, peers: 2 }], connections: [conn('aa')], replication: { followed: 1 } }));
    expect(view).toMatchObject({ localPeerId: PEER, standalone: false, bytes: { in: 10, out: 20 }, requests: { in: 3, out: 4, refused: 1 }, replication: { followed: 1 } });
    expect(view.penalties).toEqual([
      { reason: 'unsupported_protocol', count: 5 },
      { reason: 'oversized', count: 2 },
    ]);
    expect(view.topics.map((t) => t.topic)).toEqual([CTX, `ns/${NS}`]);
    expect(view.connections).toEqual([conn('aa')]);
  });

  it('reads a status with fields missing or of the wrong type as empty, never throwing', () => {
    const view = readNetworkStatus({ localPeerId: PEER, listenAddrs: [], externalAddrs: [3 as unknown as string], connections: 'x', bytes: null, penalties: [1] } as NetworkStatus);
    expect(view).toMatchObject({ standalone: false, externalAddrs: [], connections: [], topics: [], banned: [], bytes: { in: 0, out: 0 }, gossip: { in: 0, out: 0, dropped: 0 }, penalties: [] });
    expect(view.replication).toBeUndefined();
  });
});

describe('classifyTopic', () => {
  it("names a namespace's governance, a context's state and the specialized-node invitations", () => {
    expect(classifyTopic(`ns/${NS}`)).toEqual({ kind: 'namespace', id: NS, description: "a namespace's governance" });
    expect(classifyTopic(CTX)).toEqual({ kind: 'context', id: CTX, description: "a context's state" });
    expect(classifyTopic(CTX.toUpperCase()).id).toBe(CTX);
    expect(classifyTopic('mero_specialized_node_invites').kind).toBe('specialized');
  });

  it('does not guess at names that only look close', () => {
    expect(classifyTopic(`ns/${NS.slice(2)}`).kind).toBe('other');
    expect(classifyTopic(`${CTX}0`).kind).toBe('other');
    expect(classifyTopic(`ns/${CTX}/x`).kind).toBe('other');
    expect(classifyTopic('').kind).toBe('other');
  });
});

describe('networkSummary', () => {
  it('says a standalone node has no network, whatever else the status holds', () => {
    expect(networkSummary(readNetworkStatus(status({ standalone: true, connections: [conn('aa')] })))).toMatch(/^This node runs without a network/);
  });

  it('counts peers, connections to the same peer once, topics and bans', () => {
    expect(networkSummary(readNetworkStatus(status()))).toBe('No peer connected, 0 topics followed.');
    expect(networkSummary(readNetworkStatus(status({ connections: [conn('aa')], topics: [{ topic: CTX, peers: 1 }] })))).toBe('1 peer connected, 1 topic followed.');
    const twice = status({ connections: [conn('aa'), conn('aa', '/ip4/127.0.0.1/tcp/5001'), conn('bb')], banned: [{ peerKey: 'cc', until: '2030-01-01T00:00:00Z' }] });
    expect(networkSummary(readNetworkStatus(twice))).toBe('2 peers connected (3 connections), 0 topics followed, 1 banned.');
  });
});

describe('banActive', () => {
  it('holds until its time passes', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(banActive({ peerKey: 'p', until: '2026-01-01T00:00:01Z' }, now)).toBe(true);
    expect(banActive({ peerKey: 'p', until: '2025-12-31T23:59:59Z' }, now)).toBe(false);
  });
});

describe('reachability on the Network page', () => {
  const routable = { listenAddrs: ['/ip4/192.0.2.7/tcp/4001'], externalAddrs: [] };
  it('reads the verdict and the relays held, and says what each verdict means', () => {
    const pub = readNetworkStatus(status({ ...routable, autonat: { reachability: 'public' }, relays: [] }));
    expect(pub).toMatchObject({ reachability: 'public', relays: [] });
    expect(reachabilityMeaning(pub)).toMatch(/^Public: .*connect to it directly/);
    const behindNat = readNetworkStatus(status({ ...routable, autonat: { reachability: 'private' }, relays: [{ peerId: '12D3KooWRelay', reservationStatus: 'accepted' }] }));
    expect(behindNat.relays).toEqual(['12D3KooWRelay']);
    expect(reachabilityMeaning(behindNat)).toMatch(/^Private: .*behind NAT.*through a relay/);
    expect(reachabilityMeaning(readNetworkStatus(status({ ...routable, autonat: { reachability: 'private' }, relays: [] })))).toMatch(/no relay reservation yet/);
  });

  it('calls a node listening on loopback only local, not public, whatever its peers on this machine report', () => {
    const local = readNetworkStatus(status({ autonat: { reachability: 'public' } }));
    expect(local.listenAddrs).toEqual(['/ip4/127.0.0.1/tcp/4001']);
    expect(reachabilityMeaning(local)).toMatch(/^Local only: .*127\.0\.0\.1.*--swarm-host 0\.0\.0\.0/);
    expect(reachabilityMeaning(readNetworkStatus(status({ listenAddrs: ['/ip6/::1/tcp/4001'], externalAddrs: [] })))).toMatch(/^Local only/);
    // one routable address (listened on, or announced) is enough to be more than local
    expect(reachabilityMeaning(readNetworkStatus(status({ autonat: { reachability: 'public' }, externalAddrs: ['/ip4/203.0.113.5/tcp/4001'] })))).toMatch(/^Public/);
  });

  it('reads a missing or strange verdict as unknown', () => {
    for (const autonat of [undefined, null, {}, { reachability: 'maybe' }, { reachability: 3 }]) {
      const view = readNetworkStatus(status({ ...routable, autonat }));
      expect(view.reachability).toBe('unknown');
      expect(reachabilityMeaning(view)).toMatch(/^Unknown: /);
    }
  });
});
