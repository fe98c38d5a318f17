/**
 * Issue #12 end to end: three node processes on 127.0.0.1, bootstrapped to each other as
 * `hearth dev --nodes 3` makes them, driven through the SDK (and the CLI and plain HTTP for the
 * joins). Invite → join → admit; changes made on each node converge on all; a node stopped while the
 * others change things catches up when it starts again; with one node killed the others keep
 * working, and it converges with them when it returns.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CliUser } from '../../helpers/cli.ts';
import { eventually, startCluster, type Cluster, type ClusterNode } from '../../helpers/cluster.ts';
import { ADMIN_PASSWORD, ADMIN_USER } from '../../helpers/node.ts';

const APP = 'a'.repeat(64);
let cluster: Cluster;
let a: ClusterNode, b: ClusterNode, c: ClusterNode;
const account = new Map<ClusterNode, string>();
let ns: string;

/** What every member node must agree on: GroupInfo's state hash, the member rows, the metadata. */
async function view(n: ClusterNode, groupId: string): Promise<string> {
  const [info, members, meta] = await Promise.all([n.client.groups.info(groupId), n.client.groups.members(groupId), n.client.settings.groupMetadata(groupId)]);
  const rows = members.map((m) => `${m.identity}:${m.role}`).sort();
  return JSON.stringify({ hash: info.groupStateHash, count: info.memberCount, rows, meta: meta?.name ?? null });
}

async function converged(nodes: ClusterNode[], groupId: string): Promise<boolean> {
  const views = await Promise.all(nodes.map((n) => view(n, groupId)));
  return views.every((v) => v === views[0]);
}

const hasMember = async (n: ClusterNode, groupId: string, who: string) => (await n.client.groups.members(groupId)).some((m) => m.identity === who);

beforeAll(async () => {
  cluster = await startCluster(3);
  [a, b, c] = cluster.nodes as [ClusterNode, ClusterNode, ClusterNode];
  for (const n of cluster.nodes) account.set(n, (await n.client.http.data<{ accountId: string }>('/admin-api/identity')).accountId);
}, 120_000);

afterAll(async () => {
  await cluster?.destroy();
});

describe('governance across three node processes', { timeout: 120_000 }, () => {
  it('connects the nodes: /peers, /network/status and /metrics show real connections', async () => {
    for (const n of cluster.nodes) await eventually(`${n.name} sees two peers`, async () => (await n.client.admin.peers()).count === 2);
    const status = await a.client.admin.networkStatus();
    expect(status.localPeerId).toMatch(/^12D3KooW/);
    expect(status.externalAddrs[0]).toMatch(/^\/ip4\/127\.0\.0\.1\/tcp\/\d+\/p2p\/12D3KooW/);
    expect(new Set((status.connections as { peerId: string }[]).map((x) => x.peerId)).size).toBe(2);
    expect(await a.client.admin.metrics()).toMatch(/hearth_network_peers 2/);
  });

  it('invite → join through the SDK, the CLI and plain HTTP; the inviter lists the joiners', async () => {
    ns = (await a.client.namespaces.create({ applicationId: APP, name: 'team' })).namespaceId;
    // B: the SDK, namespace route
    const forB = await a.client.invitations.inviteToNamespace(ns);
    const joined = await b.client.invitations.joinNamespace(ns, forB.invitation);
    expect(joined).toMatchObject({ namespaceId: ns, memberAccount: account.get(b) });
    // C: the CLI, invitation on stdin
    const forC = await a.client.invitations.inviteToNamespace(ns);
    const cli = await CliUser.create(c.url);
    try {
      await cli.login(ADMIN_USER, ADMIN_PASSWORD);
      const out = await cli.json(['namespace', 'join', ns, '-'], { input: JSON.stringify(forC) });
      expect(out).toMatchObject({ namespaceId: ns, memberAccount: account.get(c) });
    } finally {
      await cli.destroy();
    }
    await eventually('A lists B and C', async () => (await hasMember(a, ns, account.get(b)!)) && (await hasMember(a, ns, account.get(c)!)));
    // plain HTTP: B joins a restricted subgroup through POST /groups/join
    const { groupId: sub } = await a.client.groups.create({ applicationId: APP, parentGroupId: ns, name: 'inner', visibility: 'restricted' });
    const forSub = await a.client.invitations.inviteToGroup(sub);
    await eventually('B knows the subgroup', async () => (await b.client.groups.subgroups(ns)).some((g) => g.groupId === sub));
    const token = (await b.client.http.getTokens())?.accessToken;
    const res = await fetch(`${b.url}/admin-api/groups/join`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ invitation: forSub.invitation }),
    });
    expect(res.status).toBe(200);
    expect((await res.json()).data).toMatchObject({ groupId: sub, memberAccount: account.get(b) });
    await eventually('A lists B in the subgroup', () => hasMember(a, sub, account.get(b)!));
    await eventually('all three agree', () => converged(cluster.nodes, ns));
  });

  it('changes made on each node appear on all of them', async () => {
    await a.client.groups.setMemberRole(ns, account.get(b)!, 'Admin');
    await eventually('B is an admin on B', async () => (await b.client.groups.members(ns)).find((m) => m.identity === account.get(b))?.role === 'Admin');
    const { groupId: ops } = await b.client.groups.create({ applicationId: APP, parentGroupId: ns, name: 'ops' });
    await b.client.groups.addMembers(ns, [{ identity: 'c7'.repeat(32), role: 'Member' }]);
    await b.client.settings.setDefaultCapabilities(ns, 5);
    await c.client.settings.setMemberMetadata(ns, account.get(c)!, { name: 'cee', data: { team: 'x' } });
    await a.client.settings.setGroupMetadata(ns, { name: 'root', data: { k: 'v' } });
    await a.client.groups.removeMembers(ns, ['c7'.repeat(32)]);
    for (const n of cluster.nodes) {
      await eventually(`${n.name} has the subgroup`, async () => (await n.client.groups.subgroups(ns)).some((g) => g.groupId === ops));
      await eventually(`${n.name} has the metadata`, async () => (await n.client.settings.memberMetadata(ns, account.get(c)!))?.name === 'cee');
    }
    await eventually('all three agree', () => converged(cluster.nodes, ns));
    expect((await c.client.groups.info(ns)).defaultCapabilities).toBe(5);
    expect(await hasMember(c, ns, 'c7'.repeat(32))).toBe(false);
  });

  it('a node stopped while the others change things catches up when it starts again', async () => {
    await b.stop();
    await a.client.settings.setGroupMetadata(ns, { name: 'while-b-was-away', data: {} });
    const { groupId: late } = await a.client.groups.create({ applicationId: APP, parentGroupId: ns, name: 'late' });
    await b.start();
    await eventually('B has what it missed', async () => (await b.client.settings.groupMetadata(ns))?.name === 'while-b-was-away' && (await b.client.groups.subgroups(ns)).some((g) => g.groupId === late));
    await eventually('all three agree', () => converged(cluster.nodes, ns));
  });

  it('with A killed, B and C keep working, and A converges with them when it returns', async () => {
    await a.kill();
    await b.client.settings.setGroupMetadata(ns, { name: 'without-a', data: {} });
    await b.client.groups.addMembers(ns, [{ identity: 'd8'.repeat(32), role: 'ReadOnly' }]);
    await eventually('C sees B’s changes', async () => (await hasMember(c, ns, 'd8'.repeat(32))) && (await c.client.settings.groupMetadata(ns))?.name === 'without-a');
    await a.start();
    await eventually('A converges with B and C', async () => (await hasMember(a, ns, 'd8'.repeat(32))) && (await converged(cluster.nodes, ns)));
  });
});

