/**
 * Catch-up in a star and under load (issue 23 §5), over the in-memory network: a node pulls a
 * delta's missing parents from any connected member when the delta's publisher is not connected to
 * it, and held deltas applied in a long cascade let a read in between batches instead of holding
 * the context's write lock for all of them. The heartbeat is slowed to a minute so that it cannot
 * be what repairs the gap.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { APP_ID } from '../contexts/testkit.ts';
import { UNINITIALIZED_HASH, type DeltaRecord } from '../contexts/types.ts';
import { contextTopic } from '../network/topic-names.ts';
import { MemoryHub, type MemoryNetwork } from '../network/memory.ts';
import { APPLY_BATCH } from './apply.ts';
import { syncNode, until, type SyncNode } from './testkit.ts';

const running: SyncNode[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((n) => n.stop().catch(() => undefined)));
});

const SLOW_HEARTBEAT = { heartbeatMs: 60_000 };

async function call(n: SyncNode, contextId: string, method: string, args: Record<string, string> = {}, readOnly = false) {
  const { result } = await n.executor.call(
    contextId,
    { method, input: new TextEncoder().encode(JSON.stringify(args)), executorId: n.identity.accountId, deviceId: n.identity.publicKey, readOnly },
    () => undefined,
  );
  if (!result.ok) throw new Error(result.message);
  return result.output ? JSON.parse(new TextDecoder().decode(result.output)) : null;
}

const sameState = async (nodes: SyncNode[], id: string) => {
  const metas = await Promise.all(nodes.map((n) => n.records.getMeta(id)));
  return metas.every((m) => m && m.rootHash !== UNINITIALIZED_HASH && m.rootHash === metas[0]!.rootHash && JSON.stringify(m.dagHeads) === JSON.stringify(metas[0]!.dagHeads));
};

/** A founds a namespace and a context; B and C join through A and are then linked to A only (a star). */
async function star() {
  const hub = new MemoryHub();
  const nodes: SyncNode[] = [];
  for (let i = 0; i < 3; i++) {
    const n = await syncNode(hub, 1_700_000_000_000 + i * 100_000, undefined, undefined, undefined, SLOW_HEARTBEAT);
    running.push(n);
    nodes.push(n);
  }
  const [a, b, c] = nodes as [SyncNode, SyncNode, SyncNode];
  const ns = await a.namespaces.found({ applicationId: APP_ID });
  const { contextId } = await a.contexts.create({ groupId: ns.id, applicationId: APP_ID, initializationParams: new Uint8Array() });
  await call(a, contextId, 'set', { key: 'seed', value: 'a' });
  for (const n of [b, c]) {
    const { invitation } = await a.invitations.invite(ns.id, {});
    await n.invitations.join(JSON.parse(JSON.stringify(invitation)), ns.id);
    await until('the context is registered on the joiner', () => n.contexts.registration(contextId) !== undefined);
    // A serves the snapshot only to a member it knows of (the heartbeat that would retry is slowed)
    await until('A knows the joiner', () => a.governance.namespace(ns.id)?.groups[ns.id]?.members[n.identity.accountId] !== undefined);
    await n.contexts.join(contextId);
    await until('the joiner has the state', () => sameState([a, n], contextId));
  }
  hub.unlink(b.identity.publicKey, c.identity.publicKey);
  hub.link(a.identity.publicKey, b.identity.publicKey);
  hub.link(a.identity.publicKey, c.identity.publicKey);
  // every node holds the group key (one write from each), so what is missing later is only parents
  await call(b, contextId, 'set', { key: 'from-b', value: 'b' });
  await call(c, contextId, 'set', { key: 'from-c', value: 'c' });
  await until('the star converged', () => sameState(nodes, contextId));
  return { hub, a, b, c, contextId };
}

/** Makes `net` lose the gossip of `topic` while `lose()` says so (a dropped gossipsub message). */
function lossy(net: MemoryNetwork, topic: string, lose: () => boolean): void {
  const deliver = net.deliver.bind(net);
  net.deliver = (msg) => {
    if (msg.topic === topic && lose()) return;
    deliver(msg);
  };
}

describe('catch-up (issue 23 §5)', () => {
  it('pulls a relayed delta’s missing parent from the hub when its publisher is not connected', async () => {
    const { a, b, c, contextId } = await star();
    expect(c.net.peers()).not.toContain(b.identity.publicKey);
    let losing = true;
    lossy(c.net, contextTopic(contextId), () => losing);
    await call(b, contextId, 'set', { key: 'first', value: '1' });
    await until('A has B’s first write', async () => (await call(a, contextId, 'get', { key: 'first' }, true)) === '1');
    losing = false;
    // C hears the second write (relayed by A, published by B) and lacks its parent
    await call(b, contextId, 'set', { key: 'second', value: '2' });
    await until('C converged without a heartbeat', () => sameState([a, b, c], contextId), 5_000);
    expect(await call(c, contextId, 'get', { key: 'first' }, true)).toBe('1');
    const status = await c.sync.view(contextId);
    expect(status).toMatchObject({ pending: 0, behind: 0 });
    expect(status.peers.map((p) => p.peer)).toContain(a.identity.publicKey);
  });

  it('a read during a long cascade of held deltas answers between batches, from the state applied so far', async () => {
    const { hub, a, c, contextId } = await star();
    hub.unlink(a.identity.publicKey, c.identity.publicKey);
    const total = APPLY_BATCH * 6;
    for (let i = 0; i < total; i++) await call(a, contextId, 'set', { key: `k${i}`, value: String(i) });
    const cMeta = (await c.records.getMeta(contextId))!;
    const missed: DeltaRecord[] = await a.sync.applier.lacking(contextId, cMeta.dagHeads);
    expect(missed).toHaveLength(total);
    // every delta but the first arrives before it: all held for their parent
    for (const r of missed.slice(1)) expect(await c.sync.applier.receive(r)).toBe('pending');
    expect(c.sync.applier.pendingCount(contextId)).toBe(total - 1);
    // the first lands: the cascade applies the rest; a read issued now answers before it ends
    let cascadeDone = false;
    const cascade = c.sync.applier.receive(missed[0]!).then((o) => {
      cascadeDone = true;
      return o;
    });
    const seen = await call(c, contextId, 'entries', {}, true);
    expect(cascadeDone).toBe(false);
    const applied = Object.keys(seen as Record<string, string>).filter((k) => /^k\d+$/.test(k)).length;
    expect(applied).toBeGreaterThan(0);
    expect(applied).toBeLessThan(total);
    // the state the read saw is a prefix of the writes: k0..k(applied-1), nothing past it
    expect(Object.keys(seen as Record<string, string>).filter((k) => /^k\d+$/.test(k)).sort()).toEqual(Array.from({ length: applied }, (_, i) => `k${i}`).sort());
    // a local write also gets in before the cascade ends, and nothing is lost
    await call(c, contextId, 'set', { key: 'local', value: 'during-catch-up' });
    expect(cascadeDone).toBe(false);
    expect(await cascade).toBe('applied');
    expect(c.sync.applier.pendingCount(contextId)).toBe(0);
    expect(await call(c, contextId, 'get', { key: `k${total - 1}` }, true)).toBe(String(total - 1));
    expect(await call(c, contextId, 'get', { key: 'local' }, true)).toBe('during-catch-up');
    hub.link(a.identity.publicKey, c.identity.publicKey);
    await until('A and C converge', () => sameState([a, c], contextId));
  });
});

describe('backfill after writing apart', () => {
  it('a node that wrote more deltas than the breadth-first frontier names is sent only what it lacks, not the whole history', async () => {
    const { hub, a, b, contextId } = await star();
    // a shared history both hold
    for (let i = 0; i < 60; i++) await call(a, contextId, 'set', { key: `shared${i}`, value: String(i) });
    await until('B holds the shared history', () => sameState([a, b], contextId));
    // apart: B writes more deltas than the 48 breadth-first ids its pull names, A writes one
    hub.unlink(a.identity.publicKey, b.identity.publicKey);
    for (let i = 0; i < 80; i++) await call(b, contextId, 'set', { key: `b${i}`, value: String(i) });
    await call(a, contextId, 'set', { key: 'from-a', value: 'a' });
    // count the deltas B receives in answer to its backfill requests
    let served = 0;
    const requestStream = b.net.requestStream.bind(b.net);
    b.net.requestStream = async function* (peer, protocol, data, opts) {
      const backfill = (JSON.parse(new TextDecoder().decode(data)) as { type?: string }).type === 'ContextBackfillRequest';
      for await (const frame of requestStream(peer, protocol, data, opts)) {
        if (backfill) served += ((JSON.parse(new TextDecoder().decode(frame)) as { deltas?: unknown[] }).deltas ?? []).length;
        yield frame;
      }
    };
    hub.link(a.identity.publicKey, b.identity.publicKey);
    b.sync.syncNow(contextId);
    await until('B has A’s write', async () => (await call(b, contextId, 'get', { key: 'from-a' }, true)) === 'a');
    // B lacked one delta of A's. With its heads' 48 nearest ancestors alone (all written apart,
    // unknown to A) A sent its whole history (65 deltas). The reaching frontier's further ids fall at
    // doubling distances, so the first one A knows is within twice the depth B wrote apart: A sends
    // what follows it (32 here), not everything
    expect(served).toBeGreaterThanOrEqual(1);
    expect(served).toBeLessThan(40);
  });
});
