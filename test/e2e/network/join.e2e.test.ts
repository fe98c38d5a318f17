/**
 * Two node processes that know nothing of each other (no bootstrap list, no mDNS) meet through an
 * invitation: the joiner dials the invitation's `admitter_addrs`, fetches the namespace and joins;
 * the inviter lists it. The joiner keeps that address (address book), so after either node restarts
 * they reconnect on their own and the one that was away catches up.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { eventually, startCluster, type Cluster, type ClusterNode } from '../../helpers/cluster.ts';

const APP = 'b'.repeat(64);
let one: Cluster, two: Cluster;
let a: ClusterNode, b: ClusterNode;

beforeAll(async () => {
  [one, two] = await Promise.all([startCluster(1), startCluster(1)]);
  a = one.nodes[0]!;
  b = two.nodes[0]!;
}, 120_000);

afterAll(async () => {
  await Promise.all([one?.destroy(), two?.destroy()]);
});

it('joins through the invitation’s addresses and reconnects after restarts', { timeout: 120_000 }, async () => {
  expect((await a.client.admin.peers()).count).toBe(0);
  const ns = (await a.client.namespaces.create({ applicationId: APP })).namespaceId;
  const { invitation } = await a.client.invitations.inviteToNamespace(ns);
  expect(invitation.admitter_addrs![0]).toMatch(/^\/ip4\/127\.0\.0\.1\/tcp\/\d+\/p2p\/12D3KooW/);
  const bAccount = (await b.client.invitations.joinNamespace(ns, invitation)).memberAccount;
  await eventually('A lists B', async () => (await a.client.groups.members(ns)).some((m) => m.identity === bAccount));

  // B away: A changes things; B comes back, redials A from its address book and catches up
  await b.stop();
  await a.client.settings.setGroupMetadata(ns, { name: 'while-b-was-away', data: {} });
  await b.start();
  await eventually('B catches up', async () => (await b.client.settings.groupMetadata(ns))?.name === 'while-b-was-away');

  // A away: B, still running, redials A when it returns; A catches up with B's change
  await a.kill();
  await b.client.settings.setMemberMetadata(ns, bAccount, { name: 'bee', data: {} });
  await a.start();
  await eventually('A catches up', async () => (await a.client.settings.memberMetadata(ns, bAccount))?.name === 'bee', 60_000);
});
