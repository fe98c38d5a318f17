/**
 * Governance catch-up sends what the asker lacks and nothing more (docs/governance.md "Catch-up"):
 * a node whose newest op the answering node has not seen yet (a diverged head, unknown there)
 * still names ops that node knows, so the answer is only the ops it lacks, counted on the
 * answering side (`stats.opsServed`). The answering node's replicator is stopped before the two
 * meet again, so it serves but never pulls: the asker's unknown head stays unknown to it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryHub } from '../../network/memory.ts';
import { TEST_APP } from '../testkit.ts';
import type { GovernanceReplicator } from './replicator.ts';
import { repNode, type RepNode } from './testkit.ts';

type Node = RepNode;

const running: GovernanceReplicator[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((r) => r.stop()));
});

// a long heartbeat: the pulls measured here are the ones a connection starts, nothing else
const node = (hub: MemoryHub, startMs: number): Promise<Node> => repNode(hub, startMs, running, { heartbeatMs: 60_000, retryPendingOnTick: false });

async function until(what: string, ok: () => boolean, timeoutMs = 5_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** A founds a namespace and B joins it; then they are cut apart. */
async function pairApart() {
  const hub = new MemoryHub();
  const a = await node(hub, 1_700_000_000_000);
  const b = await node(hub, 1_700_000_000_300);
  const ns = await a.namespaces.found({ applicationId: TEST_APP });
  const { invitation } = await a.joiner.invite(ns.id, {});
  expect((await b.joiner.join(JSON.parse(JSON.stringify(invitation)), ns.id)).pending).toBe(false);
  await until('A has B’s join', () => a.governance.opCount(ns.id) === b.governance.opCount(ns.id));
  for (const p of b.net.peers()) hub.unlink(b.identity.publicKey, p);
  return { hub, a, b, nsId: ns.id };
}

const setName = (n: Node, nsId: string, name: string) => n.settings.setMetadata(nsId, { target: 'member', account: n.identity.accountId }, { name, data: {} });

describe('governance catch-up with a head the answering node does not know', () => {
  it('sends only the ops the asker lacks', async () => {
    const { hub, a, b, nsId } = await pairApart();
    for (let i = 0; i < 10; i++) await setName(a, nsId, `a${i}`);
    await setName(b, nsId, 'b'); // B's head: A never sees it in this test
    const before = a.governance.opCount(nsId);
    expect(before).toBeGreaterThan(10); // genesis, B's join, ten names: the whole log is more than what B lacks
    await a.replicator.stop(); // A serves, never pulls
    const served = a.replicator.stats.opsServed;
    hub.link(a.identity.publicKey, b.identity.publicKey); // B pulls from A on connect
    await until('B holds A’s ten names', () => b.governance.namespace(nsId)?.groups[nsId]?.members[a.identity.accountId]?.metadata?.name === 'a9');
    expect(a.replicator.stats.opsServed - served).toBe(10);
    expect(b.governance.heads(nsId).some((h) => !a.governance.knows(nsId, h))).toBe(true); // the asker's head stayed unknown there
    expect(b.governance.opCount(nsId)).toBe(before + 1);
  });

  it('a diverged branch deeper than a single head: still only what the asker lacks', async () => {
    const { hub, a, b, nsId } = await pairApart();
    for (let i = 0; i < 5; i++) await setName(a, nsId, `a${i}`);
    for (let i = 0; i < 20; i++) await setName(b, nsId, `b${i}`); // twenty ops A does not know, within the frontier's 64 ids
    await a.replicator.stop();
    const served = a.replicator.stats.opsServed;
    hub.link(a.identity.publicKey, b.identity.publicKey);
    await until('B holds A’s names', () => b.governance.namespace(nsId)?.groups[nsId]?.members[a.identity.accountId]?.metadata?.name === 'a4');
    expect(a.replicator.stats.opsServed - served).toBe(5);
  });

  it('a node that wrote more ops while apart than a pull names: a few known ops more, not the whole log', async () => {
    const { hub, a, b, nsId } = await pairApart();
    hub.link(a.identity.publicKey, b.identity.publicKey);
    for (let i = 0; i < 80; i++) await setName(a, nsId, `c${i}`); // a long history both hold
    await until('B holds it', () => b.governance.opCount(nsId) === a.governance.opCount(nsId));
    for (const p of b.net.peers()) hub.unlink(b.identity.publicKey, p);
    for (let i = 0; i < 5; i++) await setName(a, nsId, `a${i}`);
    for (let i = 0; i < 100; i++) await setName(b, nsId, `b${i}`); // more than the 64 ids a pull names
    await a.replicator.stop();
    const whole = a.governance.opCount(nsId);
    const served = a.replicator.stats.opsServed;
    hub.link(a.identity.publicKey, b.identity.publicKey);
    await until('B holds A’s names', () => b.governance.namespace(nsId)?.groups[nsId]?.members[a.identity.accountId]?.metadata?.name === 'a4');
    const sent = a.replicator.stats.opsServed - served;
    expect(whole).toBeGreaterThan(85);
    // the 5 it lacks and the known ops down to the first id A knows among those named (the samples
    // past the breadth-first 48 sit 0, 1, 3, 7, 15, 31, 63 … deeper: 63 is past B's 100 new ops)
    expect(sent).toBeGreaterThanOrEqual(5);
    expect(sent).toBeLessThan(5 + 20);
  });
});
