/**
 * Issue #32 §3: the NAT lab's relay with QUIC peers. The lab of nat-relay.e2e.test.ts (two homes
 * behind MASQUERADE routers, R public and serving as a relay; test/helpers/nat-lab.ts), with every
 * node on Node.js 26 (helpers/node-lines.ts) and A and B knowing R only by its QUIC address: they
 * reach R over QUIC through their NATs, find themselves private, reserve on R over that QUIC
 * connection, and B joins A's context through R; the context replicates both ways over the relay.
 *
 * Skipped, saying why, without root, `ip` or `iptables`, or without a Node.js 26 binary.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, joinContext, kvContextOn, type ClusterNode } from '../../helpers/cluster.ts';
import { LAB_SWARM_PORT, NatLab, startNatLab } from '../../helpers/nat-lab.ts';
import { nodeLine } from '../../helpers/node-lines.ts';

const lab = new NatLab('natq');
const line = nodeLine(26);
let unavailable: string | undefined;
let r: ClusterNode, a: ClusterNode, b: ClusterNode;

interface Status {
  localPeerId: string;
  listenAddrs: string[];
  externalAddrs: string[];
  relays: { peerId: string; reservationStatus: string }[];
  autonat: { reachability: string };
  connections: { peerId: string; remoteAddr: string }[];
}
const net = async (n: ClusterNode) => (await n.client.admin.networkStatus()) as unknown as Status;
const reach = async (n: ClusterNode) => (await net(n)).autonat.reachability;

beforeAll(async () => {
  ({ unavailable, r, a, b } = await startNatLab(lab, 'nat-quic.e2e.test.ts', 'why' in line ? { unavailable: line.why } : { nodeBinary: line.binary, quic: true }));
}, 180_000);
afterAll(() => lab.tearDown(), 60_000);

describe('two homes behind NAT reaching a relay over QUIC', { timeout: 180_000 }, () => {
  const skipUnlessLab = (t: { skip: (condition: boolean, note?: string) => void }) => t.skip(unavailable !== undefined, `${unavailable}`);

  it('A and B reach R over QUIC through their NATs, are private, and reserve on R', async (t) => {
    skipUnlessLab(t);
    expect(await lab.selfCheck()).toBeUndefined(); // no packet to the lab's "internet" can leave the machine
    const rId = (await net(r)).localPeerId;
    expect((await net(r)).listenAddrs).toContain(`/ip4/${lab.r.data}/udp/${LAB_SWARM_PORT}/quic-v1`);
    await eventually('A and B private', async () => (await reach(a)) === 'private' && (await reach(b)) === 'private', 90_000).catch(async (err: Error) => {
      const seen = async (n: ClusterNode) => JSON.stringify({ autonat: (await net(n)).autonat, connections: (await net(n)).connections.map((c) => c.remoteAddr) });
      throw new Error(`${err.message}\nA: ${await seen(a)}\nB: ${await seen(b)}\nR: ${await seen(r)}`);
    });
    for (const n of [a, b]) {
      await eventually(`${n.name} holds a reservation on R`, async () => (await net(n)).relays.some((x) => x.peerId === rId), 60_000);
      const s = await net(n);
      const toR = s.connections.filter((c) => c.peerId === rId).map((c) => c.remoteAddr);
      expect(toR.length).toBeGreaterThan(0);
      for (const x of toR) expect(x).toBe(`/ip4/${lab.r.data}/udp/${LAB_SWARM_PORT}/quic-v1/p2p/${rId}`);
      expect(s.externalAddrs.filter((x) => x.includes('/p2p-circuit/')).length).toBeGreaterThan(0);
    }
  });

  it('B joins A’s context through R, and it replicates both ways over the relay', async (t) => {
    skipUnlessLab(t);
    const { ns, ctx } = await kvContextOn([a, b], a, 'com.hearth.kv.natq');
    await joinContext(a, b, ns, ctx, 60_000);
    await a.client.rpc.execute(ctx, 'set', { key: 'from-a', value: 'A over QUIC' });
    await b.client.rpc.execute(ctx, 'set', { key: 'from-b', value: 'B over QUIC' });
    const entries = (n: ClusterNode) => n.client.rpc.execute<Record<string, string>>(ctx, 'entries', {});
    for (const n of [a, b]) {
      await eventually(`${n.name} holds both writes`, async () => {
        const e = await entries(n);
        return e['from-a'] === 'A over QUIC' && e['from-b'] === 'B over QUIC';
      }, 90_000);
    }
    // A and B reach each other only through R (no home is dialable)
    const aId = (await net(a)).localPeerId;
    const bToA = (await net(b)).connections.filter((c) => c.peerId === aId);
    expect(bToA.length).toBeGreaterThan(0);
    for (const c of bToA) expect(c.remoteAddr).toContain('/p2p-circuit');
  });
});
