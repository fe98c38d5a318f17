/**
 * Auto-follow over the in-memory network (real governance, replication, contexts and context sync):
 * joiners by invitation hold and read the namespace's contexts without a context join call, the
 * explicit join stays idempotent with the same key, the flags are obeyed (off stops new joins, on
 * resumes them, subgroups only with `autoFollowSubgroups`), a left context is not re-joined, a
 * detached one is left, and a pass cut short by a restart resumes with at most `passLimit` per pass.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { GroupService } from '../governance/groups/service.ts';
import type { GroupState, MemberState, NamespaceState } from '../governance/types.ts';
import { MemoryHub } from '../network/memory.ts';
import { syncNode, until, type SyncNode } from '../sync/testkit.ts';
import { AutoFollow, followable, followsGroup, type PassReport } from './auto-follow.ts';
import { MemoryStore } from '../store/memory.ts';
import type { ContextMeta } from './types.ts';
import { APP_ID } from './testkit.ts';
import { UNINITIALIZED_HASH } from './types.ts';

const running: SyncNode[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((n) => n.stop().catch(() => undefined)));
});

type FollowOpts = { passLimit?: number; onPass?: (r: PassReport) => void };

async function node(hub: MemoryHub, startMs: number, follow: FollowOpts | null = {}, existing?: SyncNode): Promise<SyncNode> {
  const n = await syncNode(hub, startMs, existing ? { store: existing.store, identity: existing.identity } : undefined, undefined, follow ?? undefined);
  running.push(n);
  return n;
}

const dec = (b: Uint8Array | null) => (b ? JSON.parse(new TextDecoder().decode(b)) : null);

async function call(n: SyncNode, contextId: string, method: string, args: Record<string, string> = {}, readOnly = false) {
  const { result } = await n.executor.call(
    contextId,
    { method, input: new TextEncoder().encode(JSON.stringify(args)), executorId: n.identity.accountId, deviceId: n.identity.publicKey, readOnly },
    () => undefined,
  );
  if (!result.ok) throw new Error(result.message);
  return dec(result.output);
}

const read = (n: SyncNode, contextId: string, key: string) => call(n, contextId, 'get', { key }, true).catch(() => undefined);
const owned = async (n: SyncNode, contextId: string) => (await n.records.listMembers(contextId)).filter((m) => m.owned).map((m) => m.publicKey);

async function create(a: SyncNode, groupId: string, value: string): Promise<string> {
  const { contextId } = await a.contexts.create({ groupId, applicationId: APP_ID, initializationParams: new Uint8Array() });
  await call(a, contextId, 'set', { key: 'k', value });
  return contextId;
}

async function joinNamespace(a: SyncNode, n: SyncNode, nsId: string): Promise<void> {
  const { invitation } = await a.invitations.invite(nsId, {});
  await n.invitations.join(JSON.parse(JSON.stringify(invitation)), nsId);
}

describe('auto-follow', () => {
  it('joiners by invitation hold every context of the namespace (before and after their join) and read its writes without a join call', async () => {
    const hub = new MemoryHub();
    const a = await node(hub, 1_700_000_000_000);
    const b = await node(hub, 1_700_000_100_000);
    const c = await node(hub, 1_700_000_200_000);
    const ns = await a.namespaces.found({ applicationId: APP_ID });
    const before = await create(a, ns.id, 'one');
    await joinNamespace(a, b, ns.id);
    await joinNamespace(a, c, ns.id);
    const after = await create(a, ns.id, 'two');
    for (const n of [b, c]) {
      await until('the first context read back', async () => (await read(n, before, 'k')) === 'one');
      await until('the second context read back', async () => (await read(n, after, 'k')) === 'two');
      expect((await n.contexts.list()).map((v) => v.id).sort()).toEqual([before, after].sort());
      expect(await owned(n, before)).toEqual([n.identity.publicKey]);
      // the same frame a manual join gives: the context's sync status on the joiner's bus
      expect(n.events.some((e) => e.type === 'context' && e.contextId === after && e.kind === 'SyncStatus')).toBe(true);
      expect([...(await n.autoFollow!.records()).keys()].sort()).toEqual([before, after].sort());
    }
    await until('B caught up', async () => (await b.sync.view(after)).caughtUp);
    // the explicit join stays: idempotent, with the member key auto-follow took
    expect(await b.contexts.join(after)).toEqual({ contextId: after, memberPublicKey: b.identity.publicKey });
    expect(await owned(b, after)).toEqual([b.identity.publicKey]);
    // and writes flow back from a joiner that never called join
    await call(c, before, 'set', { key: 'from-c', value: 'c' });
    await until('A reads C’s write', async () => (await read(a, before, 'from-c')) === 'c');
    // the creator's own pass never touched its contexts (no record, one owned key)
    expect((await a.autoFollow!.records()).size).toBe(0);
    expect(await owned(a, before)).toEqual([a.identity.publicKey]);
  });

  it('auto-follow off stops new joins and keeps the joined ones; on again joins what was missed', async () => {
    const hub = new MemoryHub();
    const a = await node(hub, 1_700_000_000_000);
    const c = await node(hub, 1_700_000_100_000);
    const ns = await a.namespaces.found({ applicationId: APP_ID });
    const first = await create(a, ns.id, 'one');
    await joinNamespace(a, c, ns.id);
    await until('C follows the first context', async () => (await read(c, first, 'k')) === 'one');
    await c.members.setAutoFollow(ns.id, c.identity.accountId, false, false);
    await until('A knows C’s flag', () => a.governance.namespace(ns.id)!.groups[ns.id]!.members[c.identity.accountId]!.autoFollow.contexts === false);
    const second = await create(a, ns.id, 'two');
    await until('C knows the second context', () => c.contexts.registration(second) !== undefined);
    await c.autoFollow!.settled();
    expect(await c.records.getMeta(second)).toBeUndefined();
    expect(await c.records.getMeta(first)).toBeDefined(); // joined before: stays joined
    await call(a, first, 'set', { key: 'k', value: 'still' });
    await until('C still syncs the first context', async () => (await read(c, first, 'k')) === 'still');
    await c.members.setAutoFollow(ns.id, c.identity.accountId, true, false);
    await until('C follows the second context once the flag is on', async () => (await read(c, second, 'k')) === 'two');
  });

  it('open subgroups: followed only with autoFollowSubgroups; restricted ones never by inheritance', async () => {
    const hub = new MemoryHub();
    const a = await node(hub, 1_700_000_000_000);
    const b = await node(hub, 1_700_000_100_000);
    const ns = await a.namespaces.found({ applicationId: APP_ID });
    const groups = new GroupService({ governance: a.governance, identity: a.identity, namespaces: a.namespaces });
    const open = await groups.create({ applicationId: APP_ID, parentGroupId: ns.id, visibility: 'open' });
    const closed = await groups.create({ applicationId: APP_ID, parentGroupId: ns.id, visibility: 'restricted' });
    const inOpen = await create(a, open, 'open');
    const inClosed = await create(a, closed, 'closed');
    const root = await create(a, ns.id, 'root');
    await joinNamespace(a, b, ns.id);
    await until('B follows the root context', async () => (await read(b, root, 'k')) === 'root');
    await b.autoFollow!.settled();
    expect(await b.records.getMeta(inOpen)).toBeUndefined();
    await b.members.setAutoFollow(ns.id, b.identity.accountId, true, true);
    await until('B follows the open subgroup’s context', async () => (await read(b, inOpen, 'k')) === 'open');
    await b.autoFollow!.settled();
    expect(await b.records.getMeta(inClosed)).toBeUndefined();
    // added to the restricted subgroup by an admin: B's node follows its contexts (direct row)
    await a.members.addMembers(closed, [{ identity: b.identity.accountId, role: 'Member' }]);
    await until('B follows the restricted subgroup’s context once added', async () => (await read(b, inClosed, 'k')) === 'closed');
  });

  it('an inherited join (join-via-inheritance) of an open subgroup follows its contexts without autoFollowSubgroups', async () => {
    const hub = new MemoryHub();
    const a = await node(hub, 1_700_000_000_000);
    const b = await node(hub, 1_700_000_100_000);
    const ns = await a.namespaces.found({ applicationId: APP_ID });
    const groups = new GroupService({ governance: a.governance, identity: a.identity, namespaces: a.namespaces });
    const open = await groups.create({ applicationId: APP_ID, parentGroupId: ns.id, visibility: 'open' });
    const inOpen = await create(a, open, 'open');
    await joinNamespace(a, b, ns.id);
    await until('B knows the subgroup’s context', () => b.contexts.registration(inOpen) !== undefined);
    await b.autoFollow!.settled();
    expect(await b.records.getMeta(inOpen)).toBeUndefined();
    expect((await b.members.joinViaInheritance(open)).wasInherited).toBe(true);
    await until('B follows the subgroup’s context', async () => (await read(b, inOpen, 'k')) === 'open');
  });

  it('a context the user left is not joined again automatically; an explicit join takes it back', async () => {
    const hub = new MemoryHub();
    const a = await node(hub, 1_700_000_000_000);
    const b = await node(hub, 1_700_000_100_000);
    const ns = await a.namespaces.found({ applicationId: APP_ID });
    const ctx = await create(a, ns.id, 'one');
    await joinNamespace(a, b, ns.id);
    await until('B follows', async () => (await read(b, ctx, 'k')) === 'one');
    await b.contexts.leave(ctx);
    await create(a, ns.id, 'another'); // governance moves on: B runs another pass
    await until('B follows the new context', async () => (await b.contexts.list()).length === 2);
    await b.autoFollow!.settled();
    expect(await owned(b, ctx)).toEqual([]);
    expect((await b.contexts.join(ctx)).memberPublicKey).toBe(b.identity.publicKey);
    expect(await owned(b, ctx)).toEqual([b.identity.publicKey]);
  });

  it('a context joined automatically and then detached from its group is left (state kept); one created here is not', async () => {
    const hub = new MemoryHub();
    const a = await node(hub, 1_700_000_000_000);
    const b = await node(hub, 1_700_000_100_000);
    const ns = await a.namespaces.found({ applicationId: APP_ID });
    const ctx = await create(a, ns.id, 'one');
    await joinNamespace(a, b, ns.id);
    await until('B follows', async () => (await read(b, ctx, 'k')) === 'one');
    await a.members.removeContext(ns.id, ctx);
    await until('B left the detached context', async () => (await owned(b, ctx)).length === 0);
    expect((await b.records.getMeta(ctx))!.rootHash).not.toBe(UNINITIALIZED_HASH);
    expect((await b.autoFollow!.records()).has(ctx)).toBe(false);
    await a.autoFollow!.settled();
    expect(await owned(a, ctx)).toEqual([a.identity.publicKey]);
    // deleted on A: B leaves it too
    const other = await create(a, ns.id, 'two');
    await until('B follows the other context', async () => (await read(b, other, 'k')) === 'two');
    expect(await a.contexts.delete(other)).toBe(true);
    await until('B left the deleted context', async () => (await owned(b, other)).length === 0);
  });

  it('at most passLimit contexts per pass; a restart in the middle of the passes resumes them', async () => {
    const hub = new MemoryHub();
    const a = await node(hub, 1_700_000_000_000);
    const passes: PassReport[] = [];
    let b: SyncNode | undefined;
    b = await node(hub, 1_700_000_100_000, {
      passLimit: 2,
      onPass: (r) => {
        if (r.joined.length === 0) return;
        passes.push(r);
        void b!.autoFollow!.stop(); // the node "dies" after its first pass that joined anything
      },
    });
    const ns = await a.namespaces.found({ applicationId: APP_ID });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await create(a, ns.id, `v${i}`));
    await joinNamespace(a, b, ns.id);
    await until('the first pass', () => passes.length === 1);
    await b.autoFollow!.settled();
    expect(passes[0]).toMatchObject({ remaining: 3 });
    expect(passes[0]!.joined).toHaveLength(2);
    expect((await b.contexts.list()).length).toBe(2);
    await b.stop();
    running.splice(running.indexOf(b), 1);

    const resumed: PassReport[] = [];
    const b2 = await node(hub, 1_800_000_000_000, { passLimit: 2, onPass: (r) => r.joined.length > 0 && resumed.push(r) }, b);
    hub.link(b2.identity.publicKey, a.identity.publicKey);
    for (const [i, id] of ids.entries()) await until(`context ${i} read back`, async () => (await read(b2, id, 'k')) === `v${i}`);
    expect(resumed.map((r) => r.joined.length)).toEqual([2, 1]);
    expect(resumed.flatMap((r) => r.joined).sort()).toEqual(ids.filter((id) => !passes[0]!.joined.includes(id)).sort());
  });
});

describe('followable', () => {
  const A = 'aa'.repeat(32);
  const B = 'bb'.repeat(32);
  const row = (contexts: boolean, subgroups: boolean, role: MemberState['role'] = 'Member'): MemberState => ({ role, autoFollow: { contexts, subgroups }, metadata: null, joinedAt: 1 });
  const group = (id: string, parentId: string | null, visibility: 'open' | 'restricted', contexts: string[], members: Record<string, MemberState> = {}): GroupState =>
    ({
      id,
      namespaceId: 'ns',
      parentId,
      owner: A,
      ownerOpCounter: '0',
      members,
      defaultCapabilities: 4,
      subgroupVisibility: visibility,
      metadata: null,
      contexts: Object.fromEntries(contexts.map((c, i) => [c, { metadata: null, registeredAt: 10 - i }])),
      targetApplicationId: APP_ID,
      appKey: '00'.repeat(32),
    }) as GroupState;
  const state = (memberRow: MemberState): NamespaceState => {
    const ns = { id: 'ns', groups: {} as Record<string, GroupState> } as NamespaceState;
    ns.groups.ns = group('ns', null, 'open', ['c1', 'c2'], { [A]: row(true, false, 'Admin'), [B]: memberRow });
    ns.groups.open = group('open', 'ns', 'open', ['c3']);
    ns.groups.deep = group('deep', 'open', 'open', ['c4']);
    ns.groups.closed = group('closed', 'ns', 'restricted', ['c5']);
    ns.groups.under = group('under', 'closed', 'open', ['c6']);
    return ns;
  };

  it('direct rows follow per autoFollowContexts, oldest registration first', () => {
    expect(followable([state(row(true, false))], B).map((c) => c.contextId)).toEqual(['c2', 'c1']);
    expect(followable([state(row(false, false))], B)).toEqual([]);
  });

  it('open subgroups (at any depth) need autoFollowSubgroups too; restricted ones and what is below them are not inherited', () => {
    expect(followable([state(row(true, true))], B).map((c) => c.contextId).sort()).toEqual(['c1', 'c2', 'c3', 'c4']);
    expect(followable([state(row(false, true))], B)).toEqual([]);
    const ns = state(row(true, true));
    expect(followsGroup(ns, ns.groups.closed!, B)).toBe(false);
    expect(followsGroup(ns, ns.groups.under!, B)).toBe(false);
    expect(followable([ns], 'cc'.repeat(32))).toEqual([]);
  });

  it('a direct row in a subgroup follows by its own flag, whatever the parent says', () => {
    const ns = state(row(false, false));
    ns.groups.closed!.members[B] = row(true, false);
    expect(followable([ns], B).map((c) => c.contextId)).toEqual(['c5']);
  });
});

describe('AutoFollow passes', () => {
  it('a pass that fails (the store) is reported, not thrown, and the next op runs a pass again', async () => {
    const store = new MemoryStore();
    await store.open();
    const account = 'bb'.repeat(32);
    const ns = {
      id: 'ns',
      groups: {
        ns: {
          id: 'ns',
          parentId: null,
          subgroupVisibility: 'open',
          members: { [account]: { role: 'Member', autoFollow: { contexts: true, subgroups: false }, metadata: null, joinedAt: 1 } },
          contexts: { c1: { metadata: null, registeredAt: 1 } },
        },
      },
    } as unknown as NamespaceState;
    let listener: (() => void) | undefined;
    let failures = 1;
    const followed: string[] = [];
    const errors: unknown[] = [];
    const follow = new AutoFollow({
      governance: { namespaces: () => [ns], onOps: (l) => ((listener = () => l({ namespaceId: 'ns', ops: [], local: false })), () => undefined) },
      contexts: {
        follow: async (id) => (followed.push(id), { contextId: id, memberPublicKey: 'k' }),
        leave: async () => undefined,
        registration: () => ({}) as never,
        sync: async () => undefined,
      },
      records: {
        listMeta: async (): Promise<ContextMeta[]> => {
          if (failures-- > 0) throw new Error('store closed');
          return [];
        },
      },
      store,
      account,
      now: () => 1,
      onError: (err) => errors.push(err),
    });
    follow.start();
    await follow.settled();
    expect(errors).toHaveLength(1);
    expect(followed).toEqual([]);
    listener!();
    await follow.settled();
    expect(followed).toEqual(['c1']);
    await follow.stop();
  });
});
