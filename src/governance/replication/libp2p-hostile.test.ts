/**
 * Hostile governance input over the real network (issue #12 §6): a node replicating governance on
 * libp2p receives, from a stranger connected to it, malformed gossip, a forged op, an op with a bad
 * signature, requests it has no right to make and garbage on the sync stream. Each is dropped and
 * penalized; the stranger ends up banned and disconnected; the node never crashes or stalls, and an
 * honest member still joins and replicates through it.
 */
import { afterAll, expect, it } from 'vitest';
import { namespaceTopic } from '../../network/topic-names.ts';
import type { Libp2pNetwork } from '../../network/libp2p.ts';
import { encodeJson, SYNC_PROTOCOL } from '../../network/router.ts';
import { newNodeKey, TestNodes } from '../../network/test-nodes.ts';
import { NodeIdentity } from '../../identity/identity.ts';
import { MemoryStore } from '../../store/memory.ts';
import { InvitationService } from '../invitations/service.ts';
import { forgedOp, govNode, tickingClock, TEST_APP, type GovNode } from '../testkit.ts';
import type { GovernanceReplicator } from './replicator.ts';
import { replicateOn } from './testkit.ts';
import { KIND } from './wire.ts';

const nets = new TestNodes();
const replicators: GovernanceReplicator[] = [];
afterAll(async () => {
  await Promise.all(replicators.map((r) => r.stop()));
  await nets.teardown();
});

async function member(startMs: number): Promise<GovNode & { net: Libp2pNetwork; joiner: InvitationService }> {
  const key = newNodeKey();
  const store = new MemoryStore();
  const clock = tickingClock(startMs);
  const identity = await NodeIdentity.load(store, key, clock.now());
  const g = await govNode(startMs, { store, identity, clock });
  const net = await nets.start({ privateKey: key });
  const { joiner } = replicateOn(g, net, replicators, { heartbeatMs: 200, requestTimeoutMs: 3_000, dialTimeoutMs: 3_000 });
  return { ...g, net, joiner };
}

const wait = async (what: string, ok: () => boolean, ms = 10_000) => {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
};

it('drops and penalizes hostile governance input over libp2p, bans the sender, and keeps replicating', { timeout: 60_000 }, async () => {
  const a = await member(1_700_000_000_000);
  const ns = await a.namespaces.found({ applicationId: TEST_APP });
  const topic = namespaceTopic(ns.id);
  const x = await nets.start();
  const xKey = await x.dial(a.net.addresses()[0]!, { timeoutMs: 5_000 });
  expect(xKey).toBe(a.identity.publicKey);
  x.subscribe(topic, () => undefined);
  await wait('A sees X on the topic', () => a.net.topicPeers(topic).includes(x.self));
  // X's publishes reach A only once X has heard A's subscription too (gossip drops them otherwise)
  await wait('X sees A on the topic', () => x.topicPeers(topic).includes(a.net.self));

  const forged = forgedOp(a.governance, ns.id, a.identity.accountId, 'metadata.set', { target: 'group', name: 'owned', data: {} });
  await x.publish(topic, new TextEncoder().encode('not json'));
  await x.publish(topic, encodeJson({ type: 'op', op: forged }));
  await x.publish(topic, encodeJson({ type: 'op', op: { ...forged, signature: '00'.repeat(64) } }));
  await x.publish(topic, encodeJson({ type: 'mystery' }));
  const ask = (body: unknown) => x.request(a.identity.publicKey, SYNC_PROTOCOL, encodeJson(body), { timeoutMs: 3_000, maxResponseFrameBytes: 1 << 20 });
  await expect(ask({ type: KIND.backfill, namespaceId: ns.id, heads: [] })).rejects.toMatchObject({ kind: 'refused', message: expect.stringMatching(/not a member/) });
  await expect(ask({ type: 'NoSuchKind' })).rejects.toMatchObject({ kind: 'refused' });
  await wait('penalties for each piece', () => (a.net.status().penalties.invalid_message ?? 0) + (a.net.status().penalties.unauthorized ?? 0) >= 5);
  expect(a.governance.namespace(ns.id)!.groups[ns.id]!.metadata).toBeNull();

  // an honest member joins and replicates meanwhile
  const b = await member(1_700_000_100_000);
  const { invitation } = await a.joiner.invite(ns.id, {});
  expect((await b.joiner.join(JSON.parse(JSON.stringify(invitation)), ns.id)).pending).toBe(false);
  await wait('A lists B', () => a.governance.namespace(ns.id)!.groups[ns.id]!.members[b.identity.accountId] !== undefined);

  // a sender that keeps it up is banned and disconnected; the node goes on serving
  for (let i = 0; i < 25 && a.net.peers().includes(x.self); i++) await x.publish(topic, new TextEncoder().encode(`garbage ${i}`)).catch(() => 0);
  await wait('X banned', () => a.net.status().banned.some((ban) => ban.peer === x.self));
  await wait('X disconnected', () => !a.net.peers().includes(x.self));
  await a.settings.setMetadata(ns.id, { target: 'group' }, { name: 'still-fine', data: {} });
  await wait('B sees the change', () => b.governance.namespace(ns.id)?.groups[ns.id]?.metadata?.name === 'still-fine');
});
