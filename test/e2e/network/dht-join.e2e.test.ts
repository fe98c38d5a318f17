/**
 * Issue #24: a node that knows only a bootstrap node finds a member node through the Kademlia DHT
 * and syncs from it. Three node processes on 127.0.0.1: S (bootstrap only, no member), M (holds a
 * namespace and a context with a write), J (knows only S). M's invitation carries no address at
 * all (`admitterAddrs: []`), so the only way J can reach M is the DHT: S's routing table hands J
 * M's peer id and address, J connects, joins and reads M's write. (src/network/dht.test.ts shows
 * the same lookup failing with the DHT off.)
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prepareCluster } from '../../../src/cli/dev-cluster.ts';
import { loadConfig, saveConfig } from '../../../src/config/config.ts';
import { ClusterNode, eventually, freePortRun, kvContextOn } from '../../helpers/cluster.ts';

let root: string;
let s: ClusterNode, m: ClusterNode, j: ClusterNode;
let mPeerId: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'hearth-dht-'));
  const base = await freePortRun(3);
  const members = await prepareCluster({ nodes: 3, home: root, node: 'n', port: base, swarmPort: base + 1000 });
  const [ms, mm, mj] = members as [(typeof members)[0], (typeof members)[0], (typeof members)[0]];
  const sAddr = `/ip4/127.0.0.1/tcp/${ms.swarmPort}/p2p/${ms.peerId}`;
  for (const [x, boot] of [[ms, []], [mm, [sAddr]], [mj, [sAddr]]] as const) {
    const cfg = await loadConfig(x.paths.config, x.name);
    cfg.bootstrap.nodes = [...boot];
    await saveConfig(x.paths.config, cfg);
  }
  mPeerId = mm.peerId;
  [s, m, j] = members.map((x) => new ClusterNode(x.name, root, x.swarmPort));
  await s.start();
  await Promise.all([m.start(), j.start()]);
}, 120_000);

afterAll(async () => {
  await Promise.allSettled([s, m, j].map((n) => n?.stop()));
  if (root) await rm(root, { recursive: true, force: true });
}, 60_000);

describe('finding a member through the DHT', { timeout: 120_000 }, () => {
  it('J, knowing only S, connects to M, joins on an invitation with no address and reads M’s write', async () => {
    const { ns, ctx } = await kvContextOn([m, j], m, 'com.hearth.kv.dht');
    await m.client.rpc.execute(ctx, 'set', { key: 'k', value: 'from M' });

    const connections = async (n: ClusterNode) => ((await n.client.admin.networkStatus()).connections as { peerId: string }[]).map((c) => c.peerId);
    await eventually('J connected to M (found through the DHT)', async () => (await connections(j)).includes(mPeerId), 60_000);
    // the routing table takes a peer once identify has shown it serves the DHT: a moment after connecting
    const tableSize = async () => ((await j.client.admin.networkStatus()).internet as { dht: { routingTableSize: number } }).dht.routingTableSize;
    await eventually('J holds S and M in its routing table', async () => (await tableSize()) >= 2, 30_000);

    const { invitation } = await m.client.invitations.inviteToNamespace(ns, { admitterAddrs: [] });
    expect(invitation.admitter_addrs ?? []).toEqual([]);
    await j.client.invitations.joinNamespace(ns, invitation);
    await j.client.groups.sync(ns);
    await eventually('J lists the context', async () => (await j.client.groups.contexts(ns)).some((x) => x.contextId === ctx), 30_000);
    await j.client.contexts.join(ctx);
    await eventually('J reads M’s write', async () => (await j.client.rpc.execute<Record<string, string>>(ctx, 'entries', {}))['k'] === 'from M', 60_000);
  });
});
