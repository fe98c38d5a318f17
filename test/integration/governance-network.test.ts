/**
 * Three in-process nodes on an in-memory network, driven through the SDK over real HTTP: the
 * invite → join → admit flow of the spec's routes, changes on each node reaching the others,
 * `POST /groups/{g}/sync`, `/peers` and `/usage` from real figures. (The same flows over libp2p
 * between separate processes: test/e2e/network/join.e2e.test.ts, network/governance.e2e.test.ts.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, MemoryTokenStore, type Client } from '../../src/client/index.ts';
import { MemoryHub } from '../../src/network/memory.ts';
import { memoryNetwork, startTestNode, type TestNode } from '../helpers/node.ts';

const APP = 'a'.repeat(64);
const hub = new MemoryHub();
let nodes: TestNode[] = [];
let clients: Client[] = [];
let accounts: string[] = [];

async function until(what: string, ok: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await ok())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

beforeAll(async () => {
  nodes = await Promise.all([0, 1, 2].map(() => startTestNode({ network: memoryNetwork(hub) })));
  clients = await Promise.all(
    nodes.map(async (n) => {
      const c = createClient({ baseUrl: n.url, tokenStore: new MemoryTokenStore() });
      await c.auth.login({ username: n.adminUser, password: n.adminPassword });
      return c;
    }),
  );
  accounts = await Promise.all(clients.map(async (c) => (await c.http.data<{ accountId: string }>('/admin-api/identity')).accountId));
});

afterAll(async () => {
  await Promise.all(nodes.map((n) => n.destroy()));
});

describe('governance across nodes (in-memory network)', () => {
  let ns: string;

  it('invite → join (namespace route, SDK) → the inviter lists the joiner', async () => {
    const [a, b, c] = clients as [Client, Client, Client];
    expect((await a.admin.peers()).count).toBe(0);
    ns = (await a.namespaces.create({ applicationId: APP, name: 'team' })).namespaceId;
    const { invitation } = await a.invitations.inviteToNamespace(ns);
    expect(invitation.admitter_addrs?.length).toBeGreaterThan(0); // where to dial the inviter
    const joined = await b.invitations.joinNamespace(ns, invitation);
    expect(joined.memberAccount).toBe(accounts[1]);
    expect((await a.admin.peers()).count).toBe(1);
    await until('A lists B', async () => (await a.groups.members(ns)).some((m) => m.identity === accounts[1]));
    // C joins through the group route with a plain group invitation
    const second = await a.invitations.inviteToGroup(ns);
    await c.invitations.joinGroup(second.invitation);
    await until('B lists C', async () => (await b.groups.members(ns)).some((m) => m.identity === accounts[2]));
    expect((await b.namespaces.get(ns)).namespaceId).toBe(ns);
  });

  it('changes on any node appear on all of them', async () => {
    const [a, b, c] = clients as [Client, Client, Client];
    await a.groups.setMemberRole(ns, accounts[1]!, 'Admin');
    await until('B is admin on C', async () => (await c.groups.members(ns)).find((m) => m.identity === accounts[1])?.role === 'Admin');
    const { groupId: sub } = await b.groups.create({ applicationId: APP, parentGroupId: ns, name: 'ops' });
    await c.settings.setMemberMetadata(ns, accounts[2]!, { name: 'cee', data: { team: 'x' } });
    await a.settings.setGroupMetadata(ns, { name: 'root', data: { k: 'v' } });
    for (const client of clients) {
      await until('the subgroup everywhere', async () => (await client.groups.subgroups(ns)).some((g) => g.groupId === sub));
      await until('metadata everywhere', async () => (await client.settings.groupMetadata(ns))?.name === 'root');
      await until('member metadata everywhere', async () => (await client.settings.memberMetadata(ns, accounts[2]!))?.name === 'cee');
    }
    const infos = await Promise.all(clients.map((x) => x.groups.info(ns)));
    expect(new Set(infos.map((i) => i.groupStateHash)).size).toBe(1);
  });

  it('POST /groups/{g}/sync pulls from peers and answers the counts', async () => {
    const [a, , c] = clients as [Client, Client, Client];
    hub.partition([nodes[2]!.node.identity.publicKey], [nodes[0]!.node.identity.publicKey, nodes[1]!.node.identity.publicKey]);
    await a.groups.addMembers(ns, [{ identity: 'c7'.repeat(32), role: 'Member' }]);
    expect((await c.groups.members(ns)).some((m) => m.identity === 'c7'.repeat(32))).toBe(false);
    hub.link(nodes[2]!.node.identity.publicKey, nodes[0]!.node.identity.publicKey);
    const synced = await c.groups.sync(ns);
    expect(synced).toMatchObject({ groupId: ns, memberCount: 4 });
    expect((await c.groups.members(ns)).some((m) => m.identity === 'c7'.repeat(32))).toBe(true);
  });

  it('/usage counts each namespace this node takes part in', async () => {
    const usage = await clients[1]!.admin.usage();
    const row = usage.namespaces.find((r) => r.namespaceId === ns)!;
    expect(row).toMatchObject({ subgroupCount: 1, contextCount: 0 });
    expect(row.memberCount).toBeGreaterThanOrEqual(4);
    expect(row.bytes.governance).toBeGreaterThan(1000);
    expect(row.bytes.total).toBe(row.bytes.state + row.bytes.privateState + row.bytes.delta + row.bytes.governance);
  });
});
