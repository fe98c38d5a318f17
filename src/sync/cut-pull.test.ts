/**
 * Catch-up over a relay that cuts circuits (issue #24: "replication keeps working over the relay
 * when the upgrade fails: bounded relay data; sync falls back to pulling in batches"), over the
 * in-memory network: the requester's exchanges are cut once they have carried a data limit's worth
 * of frames, as a circuit relay v2 cuts a circuit past `relay_data_limit_bytes`. Backfill frames
 * stay within FRAME_BUDGET (64 KiB), the requester keeps the whole frames it received and pulls the
 * rest in the next batch, each on a new exchange.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { APP_ID } from '../contexts/testkit.ts';
import { UNINITIALIZED_HASH } from '../contexts/types.ts';
import { PeerNetworkError, type RequestOptions } from '../network/network-port.ts';
import { MemoryHub, type MemoryNetwork } from '../network/memory.ts';
import { syncNode, until, type SyncNode } from './testkit.ts';
import { FRAME_BUDGET } from './wire.ts';

const running: SyncNode[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((n) => n.stop().catch(() => undefined)));
});

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

/** Cuts every backfill or snapshot exchange of `net` once its frames pass `limit` bytes; records what each carried. */
function relayLimited(net: MemoryNetwork, limit: number) {
  const exchanges: { kind: string; frames: number[]; cut: boolean }[] = [];
  const inner = net.requestStream.bind(net);
  net.requestStream = async function* (peer, protocol, data: Uint8Array, opts: RequestOptions) {
    const kind = /"(ContextBackfillRequest|ContextSnapshotRequest)"/.exec(new TextDecoder().decode(data))?.[1] ?? '';
    const backfill = kind !== '';
    const seen = { kind, frames: [] as number[], cut: false };
    if (backfill) exchanges.push(seen);
    let carried = 0;
    for await (const frame of inner(peer, protocol, data, opts)) {
      carried += frame.byteLength;
      if (backfill && carried > limit) {
        seen.cut = true;
        throw new PeerNetworkError('protocol', 'the stream was reset: data limit of the relayed circuit exceeded');
      }
      if (backfill) seen.frames.push(frame.byteLength);
      yield frame;
    }
  };
  return exchanges;
}

describe('catch-up over a relay that cuts circuits past a data limit', () => {
  /** A and B share a context; B goes away while A writes 100 values of 4 KiB; B's exchanges are then cut past 150 KiB. */
  async function apart(snapshotAbove: number) {
    const hub = new MemoryHub();
    // heartbeats slowed to a minute: only the pull this test triggers can repair the gap
    const a = await syncNode(hub, 1_700_000_000_000, undefined, undefined, undefined, { heartbeatMs: 60_000, snapshotAbove });
    const b = await syncNode(hub, 1_700_000_100_000, undefined, undefined, undefined, { heartbeatMs: 60_000, snapshotAbove });
    running.push(a, b);
    const ns = await a.namespaces.found({ applicationId: APP_ID });
    const { contextId } = await a.contexts.create({ groupId: ns.id, applicationId: APP_ID, initializationParams: new Uint8Array() });
    await call(a, contextId, 'set', { key: 'seed', value: 'a' });
    const { invitation } = await a.invitations.invite(ns.id, {});
    await b.invitations.join(JSON.parse(JSON.stringify(invitation)), ns.id);
    await until('the context is registered on B', () => b.contexts.registration(contextId) !== undefined);
    await until('A knows B', () => a.governance.namespace(ns.id)?.groups[ns.id]?.members[b.identity.accountId] !== undefined);
    await b.contexts.join(contextId);
    await until('B has the state', () => sameState([a, b], contextId));
    await call(b, contextId, 'set', { key: 'from-b', value: 'b' });
    await until('A has B’s write', () => sameState([a, b], contextId));

    // B goes away; A writes about 400 KiB of values meanwhile
    hub.unlink(a.identity.publicKey, b.identity.publicKey);
    const value = 'v'.repeat(4 * 1024);
    const writes = 100;
    for (let i = 0; i < writes; i++) await call(a, contextId, 'set', { key: `k${i}`, value: `${i}:${value}` });
    const exchanges = relayLimited(b.net, 150 * 1024);
    // back through the relay: A's next write tells B what it lacks, B pulls
    hub.link(a.identity.publicKey, b.identity.publicKey);
    await call(a, contextId, 'set', { key: 'last', value: 'z' });
    return { a, b, contextId, exchanges, value, writes };
  }

  it('keeps the whole frames of a cut exchange and pulls the rest in batches until it converges', async () => {
    const { a, b, contextId, exchanges, value, writes } = await apart(100_000);
    await until('B converged through cut exchanges', () => sameState([a, b], contextId), 20_000);
    expect(exchanges.every((e) => e.kind === 'ContextBackfillRequest')).toBe(true);

    for (let i = 0; i < writes; i += 17) expect(await call(b, contextId, 'get', { key: `k${i}` }, true)).toBe(`${i}:${value}`);
    expect(await call(b, contextId, 'get', { key: 'last' }, true)).toBe('z');
    // the transfer was larger than one circuit's limit: cut at least twice, every cut after progress
    expect(exchanges.filter((e) => e.cut).length).toBeGreaterThanOrEqual(2);
    for (const e of exchanges.filter((x) => x.cut)) expect(e.frames.length).toBeGreaterThan(0);
    // every frame within the budget (JSON of the records, plus the frame's own few keys)
    const frames = exchanges.flatMap((e) => e.frames);
    expect(Math.max(...frames)).toBeLessThanOrEqual(FRAME_BUDGET + 1024);
    expect(await b.sync.view(contextId)).toMatchObject({ pending: 0, behind: 0 });
  }, 60_000);

  it('a snapshot advised but cut every time falls back to backfill batches, which converge', async () => {
    // B misses more than 20 deltas and holds nothing A lacks: A advises a snapshot (400 KiB of rows)
    const { a, b, contextId, exchanges, value, writes } = await apart(20);
    await until('B converged through cut exchanges', () => sameState([a, b], contextId), 20_000);
    const snapshots = exchanges.filter((e) => e.kind === 'ContextSnapshotRequest');
    expect(snapshots.length).toBeGreaterThanOrEqual(1);
    expect(snapshots.every((e) => e.cut)).toBe(true);
    expect(exchanges.filter((e) => e.kind === 'ContextBackfillRequest' && e.cut).length).toBeGreaterThanOrEqual(2);
    for (let i = 0; i < writes; i += 17) expect(await call(b, contextId, 'get', { key: `k${i}` }, true)).toBe(`${i}:${value}`);
  }, 60_000);
});
