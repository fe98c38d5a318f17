/**
 * Specialized-node invitations over the in-memory network: a node configured as specialized answers
 * the discovery, is admitted read-only by an inviter that admits unattested nodes, joins the
 * namespace and the context and gets its state; an inviter that does not admit unattested nodes
 * refuses; the route's checks (unknown context, an identity this node does not hold).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { APP_ID } from '../contexts/testkit.ts';
import { MemoryHub } from '../network/memory.ts';
import { syncNode, until, type SyncNode } from './testkit.ts';

const running: SyncNode[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((n) => n.stop().catch(() => undefined)));
});

async function pair(admitUnattested: boolean) {
  const hub = new MemoryHub();
  const a = await syncNode(hub, 1_700_000_000_000, undefined, { enabled: false, admitUnattested });
  const s = await syncNode(hub, 1_700_000_500_000, undefined, { enabled: true, admitUnattested: false });
  running.push(a, s);
  hub.linkAll();
  const ns = await a.namespaces.found({ applicationId: APP_ID });
  const { contextId } = await a.contexts.create({ groupId: ns.id, applicationId: APP_ID, initializationParams: new Uint8Array() });
  await a.executor.call(contextId, { method: 'set', input: new TextEncoder().encode('{"key":"k","value":"v"}'), executorId: a.identity.accountId, deviceId: a.identity.publicKey, readOnly: false }, () => undefined);
  return { hub, a, s, nsId: ns.id, contextId };
}

describe('specialized nodes', () => {
  it('a specialized node answers, is admitted read-only, joins and gets the state', async () => {
    const { a, s, nsId, contextId } = await pair(true);
    const { nonce } = await a.specialized.invite(contextId);
    expect(nonce).toMatch(/^[0-9a-f]{64}$/);
    await until('S holds the context with its state', async () => (await s.records.getMeta(contextId))?.rootHash === (await a.records.getMeta(contextId))!.rootHash);
    expect(a.governance.namespace(nsId)!.groups[nsId]!.members[s.identity.accountId]?.role).toBe('ReadOnly');
    expect(a.specialized.stats.admitted).toBe(1);
    expect(s.specialized.stats.joined).toBe(1);
  });

  it('an inviter that admits no unattested node refuses it', async () => {
    const { a, s, nsId, contextId } = await pair(false);
    await a.specialized.invite(contextId);
    await until('the refusal', () => a.specialized.stats.refused === 1 && s.specialized.stats.failed === 1);
    expect(a.governance.namespace(nsId)!.groups[nsId]!.members[s.identity.accountId]).toBeUndefined();
    expect(await s.records.getMeta(contextId)).toBeUndefined();
  });

  it('checks the route’s inputs: an unknown context is 404, an identity this node does not hold 400', async () => {
    const { a, contextId } = await pair(true);
    await expect(a.specialized.invite('ab'.repeat(32))).rejects.toMatchObject({ kind: 'not_found' });
    await expect(a.specialized.invite(contextId, 'cd'.repeat(32))).rejects.toMatchObject({ kind: 'bad_request' });
  });
});
