/** gossipsub's IP colocation scoring with hearth's options: local ranges exempt, public ones not. */
import './polyfill.ts';
import { describe, expect, it } from 'vitest';
import { createPeerScoreParams, PeerScore } from '@libp2p/gossipsub/score';
import type { Connection, PeerId } from '@libp2p/interface';
import { gossipOptions, isLocalAddress, regainGossipStream } from './gossip-service.ts';

const logger = { forComponent: () => Object.assign(() => undefined, { error: () => undefined, trace: () => undefined, enabled: false }) };

/** The scores gossipsub would give `count` peers all connected from `ip`, with hearth's options. */
function scoresFrom(ip: string, count: number): number[] {
  const score = new PeerScore(createPeerScoreParams(gossipOptions().scoreParams), null, logger as never, { scoreCacheValidityMs: 0 });
  const ids = Array.from({ length: count }, (_, i) => `peer${i}`);
  for (const id of ids) {
    score.addPeer(id);
    score.addIP(id, ip);
  }
  return ids.map((id) => score.score(id));
}

describe('gossip IP colocation', () => {
  it('knows loopback, private and link-local addresses from public ones', () => {
    for (const ip of ['127.0.0.1', '127.3.2.1', '10.1.2.3', '172.16.0.9', '172.31.255.1', '192.168.1.20', '169.254.3.4', '::1', 'fd00::5', 'fe80::1', '::ffff:127.0.0.1', '::ffff:10.0.0.2']) {
      expect(isLocalAddress(ip), ip).toBe(true);
    }
    for (const ip of ['8.8.8.8', '172.32.0.1', '172.15.255.255', '192.169.0.1', '203.0.113.5', '2001:db8::1', '::ffff:8.8.8.8', 'not-an-ip', '']) {
      expect(isLocalAddress(ip), ip).toBe(false);
    }
  });

  it('twenty nodes on one machine score no worse than zero', () => {
    expect(scoresFrom('127.0.0.1', 20).every((s) => s >= 0)).toBe(true);
    expect(scoresFrom('192.168.0.7', 20).every((s) => s >= 0)).toBe(true);
  });

  it('twenty peers behind one public address keep the penalty', () => {
    const scores = scoresFrom('203.0.113.5', 20);
    // gossipsub's graylist threshold is -80: past it, every message from the peer is ignored
    expect(scores.every((s) => s < -80)).toBe(true);
    // at ten peers per IP there is no penalty yet
    expect(scoresFrom('203.0.113.5', 10).every((s) => s === 0)).toBe(true);
  });
});

describe('gossip after one of two connections to a peer closed', () => {
  const peer = { toString: () => '12D3KooWpeer' } as unknown as PeerId;
  const conn = (name: string, o: { limited?: boolean; status?: string } = {}) => ({ name, status: o.status ?? 'open', limits: o.limited ? { bytes: 1n } : undefined }) as unknown as Connection;
  /** a gossipsub stand-in recording the outbound streams asked of it */
  const pubsub = () => {
    const asked: string[] = [];
    return { asked, createOutboundStream: async (_p: PeerId, c: Connection) => void asked.push((c as unknown as { name: string }).name) };
  };
  const tick = () => new Promise((r) => setTimeout(r, 5));

  it('asks gossipsub for an outbound stream on a connection still open, a direct one first, once the close is handled', async () => {
    const ps = pubsub();
    const connections = [conn('closing', { status: 'closing' }), conn('relayed', { limited: true }), conn('direct')];
    regainGossipStream(ps, peer, () => connections);
    expect(ps.asked).toEqual([]); // not within the close's own events
    await tick();
    expect(ps.asked).toEqual(['direct']);
    const relayedOnly = pubsub();
    regainGossipStream(relayedOnly, peer, () => [conn('relayed', { limited: true })]);
    await tick();
    expect(relayedOnly.asked).toEqual(['relayed']);
  });

  it('asks nothing when no connection to the peer is open, or of a pubsub that cannot open one', async () => {
    const ps = pubsub();
    regainGossipStream(ps, peer, () => [conn('closed', { status: 'closed' })]);
    regainGossipStream(undefined, peer, () => [conn('open')]);
    regainGossipStream({}, peer, () => [conn('open')]);
    await tick();
    expect(ps.asked).toEqual([]);
  });
});
