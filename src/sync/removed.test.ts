/**
 * A node removed from a context's group is told (issue 23 §3): its sync status names `removed` and
 * is not caught up, its writes to the context are refused with a 403 before anything is stored
 * (they would never replicate), its reads still answer from the copy it holds, and it stops
 * pulling. Re-invited with a new invitation, it writes again.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { APP_ID } from '../contexts/testkit.ts';
import { UNINITIALIZED_HASH } from '../contexts/types.ts';
import { HearthError } from '../errors.ts';
import { MemoryHub } from '../network/memory.ts';
import { syncNode, until, type SyncNode } from './testkit.ts';

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
  return metas.every((m) => m && m.rootHash !== UNINITIALIZED_HASH && m.rootHash === metas[0]!.rootHash);
};

describe('a removed node', () => {
  it('reports removed, refuses writes to the context with a 403, still reads, and writes again once re-invited', async () => {
    const hub = new MemoryHub();
    const a = await syncNode(hub, 1_700_000_000_000);
    const c = await syncNode(hub, 1_700_000_100_000);
    running.push(a, c);
    const ns = await a.namespaces.found({ applicationId: APP_ID });
    const { contextId } = await a.contexts.create({ groupId: ns.id, applicationId: APP_ID, initializationParams: new Uint8Array() });
    await call(a, contextId, 'set', { key: 'seed', value: 'a' });
    const { invitation } = await a.invitations.invite(ns.id, {});
    await c.invitations.join(JSON.parse(JSON.stringify(invitation)), ns.id);
    await until('A knows C', () => a.governance.namespace(ns.id)?.groups[ns.id]?.members[c.identity.accountId] !== undefined);
    await c.contexts.join(contextId);
    await until('C has the state', () => sameState([a, c], contextId));
    await call(c, contextId, 'set', { key: 'before', value: 'c' });
    expect((await c.sync.view(contextId)).reasons.map((r) => r.reason)).not.toContain('removed');

    await a.members.removeMembers(ns.id, [c.identity.accountId]);
    await until('C learned of its removal', () => c.governance.namespace(ns.id)?.groups[ns.id]?.members[c.identity.accountId] === undefined);
    const status = await c.sync.view(contextId);
    expect(status.caughtUp).toBe(false);
    expect(status.reasons.find((r) => r.reason === 'removed')?.detail).toMatch(/removed this node's account from group/);

    // it no longer pulls: a sync request changes nothing (a pull would be refused by A and counted)
    const quiet = await c.sync.view(contextId);
    c.sync.syncNow(contextId);
    await new Promise((r) => setTimeout(r, 300));
    const still = await c.sync.view(contextId);
    expect({ lastSyncAt: still.lastSyncAt, failureCount: still.failureCount }).toEqual({ lastSyncAt: quiet.lastSyncAt, failureCount: quiet.failureCount });

    const before = (await c.records.getMeta(contextId))!;
    const refused = await call(c, contextId, 'set', { key: 'after', value: 'never-replicates' }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(HearthError);
    expect(refused).toMatchObject({ kind: 'forbidden', message: expect.stringMatching(/removed from group .* read-only here/) });
    const after = (await c.records.getMeta(contextId))!;
    expect(after.rootHash).toBe(before.rootHash);
    expect(after.dagHeads).toEqual(before.dagHeads);
    expect(await call(c, contextId, 'get', { key: 'before' }, true)).toBe('c');
    expect(await call(c, contextId, 'get', { key: 'after' }, true)).toBeNull();

    // explicitly re-invited (an invitation minted after the removal): back, and writing again
    const { invitation: again } = await a.invitations.invite(ns.id, {});
    await c.invitations.join(JSON.parse(JSON.stringify(again)), ns.id);
    await until('A readmitted C', () => a.governance.namespace(ns.id)?.groups[ns.id]?.members[c.identity.accountId] !== undefined);
    expect((await c.sync.view(contextId)).reasons.map((r) => r.reason)).not.toContain('removed');
    await call(c, contextId, 'set', { key: 'back', value: 'c' });
    await until('A has C’s write after the re-invite', async () => (await call(a, contextId, 'get', { key: 'back' }, true)) === 'c', 10_000);
  });
});
