/**
 * The membership and tree appliers against states built from genesis ops, with several accounts
 * (paths a single node cannot reach over HTTP: leave, inherited joins, last-admin on leave).
 */
import { describe, expect, it } from 'vitest';
import { namespaceIdOf, subgroupIdOf } from '../../crypto/ids.ts';
import { HearthError } from '../../errors.ts';
import { emptyNamespace } from '../genesis.ts';
import { createAppliers } from '../ops.ts';
import { CAP, type GovOp, type NamespaceState } from '../types.ts';
import { MEMBER_OPS } from './members-ops.ts';

const registry = createAppliers();
const A = 'a1'.repeat(32);
const B = 'b2'.repeat(32);
const C = 'c3'.repeat(32);
const APP = 'ee'.repeat(32);

interface Applied {
  ns: NamespaceState;
  events: { groupId: string; kind: string; data: Record<string, unknown> }[];
}

function apply(ns: NamespaceState, account: string, groupId: string, kind: string, body: Record<string, unknown>): Applied {
  const draft = structuredClone(ns);
  const events: Applied['events'] = [];
  const op = { namespaceId: ns.id, groupId, account, kind, body, timestampMs: 5_000, seq: '1', parents: [], signer: '', nonce: '1', id: '', signature: '' } as GovOp;
  registry.get(kind)({ ns: draft, op, emit: (g, k, d) => events.push({ groupId: g, kind: k, data: d }) });
  return { ns: draft, events };
}

function status(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    if (e instanceof HearthError) return e.kind;
    throw e;
  }
  return 'ok';
}

/** A namespace founded by A with an open subgroup `open` and a restricted one `closed`, both by A. */
function world() {
  const salt = '11'.repeat(32);
  const nsId = namespaceIdOf(A, salt);
  let ns = apply(emptyNamespace(nsId, A, { salt, applicationId: APP, appKey: APP }, 1), A, nsId, 'namespace.created', { salt, applicationId: APP, appKey: APP }).ns;
  const sub = (visibility: 'open' | 'restricted', parentId: string, s: string) => {
    const groupId = subgroupIdOf(A, parentId, visibility === 'restricted', s);
    ns = apply(ns, A, parentId, 'group.created', { groupId, parentId, salt: s, visibility }).ns;
    return groupId;
  };
  const open = sub('open', nsId, '22'.repeat(32));
  const closed = sub('restricted', nsId, '33'.repeat(32));
  const deep = sub('open', open, '44'.repeat(32));
  return { ns, nsId, open, closed, deep };
}

describe('add / remove members', () => {
  it('adds with MemberAdded frames, keeps an existing row, refuses TEE roles and empty lists', () => {
    const { ns, nsId } = world();
    const r = apply(ns, A, nsId, MEMBER_OPS.added, { members: [{ account: B, role: 'Member' }, { account: A, role: 'Member' }] });
    expect(r.ns.groups[nsId]!.members[B]).toMatchObject({ role: 'Member', autoFollow: { contexts: true, subgroups: false } });
    expect(r.ns.groups[nsId]!.members[A]!.role).toBe('Admin');
    expect(r.events).toEqual([{ groupId: nsId, kind: 'MemberAdded', data: { memberAccount: B, role: 'Member' } }]);
    expect(status(() => apply(ns, A, nsId, MEMBER_OPS.added, { members: [{ account: B, role: 'RelayTee' }] }))).toBe('bad_request');
    expect(status(() => apply(ns, A, nsId, MEMBER_OPS.added, { members: [] }))).toBe('bad_request');
  });

  it('MANAGE_MEMBERS may add members but not admins; a plain member may not add', () => {
    const { ns, nsId } = world();
    let s = apply(ns, A, nsId, MEMBER_OPS.added, { members: [{ account: B, role: 'Member' }] }).ns;
    expect(status(() => apply(s, B, nsId, MEMBER_OPS.added, { members: [{ account: C, role: 'Member' }] }))).toBe('forbidden');
    s.groups[nsId]!.members[B]!.capabilities = CAP.MANAGE_MEMBERS;
    expect(status(() => apply(s, B, nsId, MEMBER_OPS.added, { members: [{ account: C, role: 'Member' }] }))).toBe('ok');
    expect(status(() => apply(s, B, nsId, MEMBER_OPS.added, { members: [{ account: C, role: 'Admin' }] }))).toBe('forbidden');
    s = apply(s, B, nsId, MEMBER_OPS.added, { members: [{ account: C, role: 'Member' }] }).ns;
    expect(status(() => apply(s, B, nsId, MEMBER_OPS.removed, { members: [A] }))).toBe('forbidden');
    const r = apply(s, B, nsId, MEMBER_OPS.removed, { members: [C] });
    expect(r.ns.groups[nsId]!.members[C]).toBeUndefined();
    expect(r.events).toEqual([{ groupId: nsId, kind: 'MemberRemoved', data: { memberAccount: C } }]);
  });

  it('owner immune 403, last admin 409, inherited-only 409, unknown 404', () => {
    const { ns, nsId, open } = world();
    expect(status(() => apply(ns, A, nsId, MEMBER_OPS.removed, { members: [A] }))).toBe('forbidden');
    const s = apply(ns, A, nsId, MEMBER_OPS.added, { members: [{ account: B, role: 'Admin' }] }).ns;
    s.groups[open]!.owner = B; // A is admin of `open` but not its owner
    s.groups[open]!.members[C] = { role: 'Admin', autoFollow: { contexts: true, subgroups: false }, metadata: null, joinedAt: 1 };
    expect(status(() => apply(s, C, open, MEMBER_OPS.removed, { members: [A, C] }))).toBe('conflict');
    expect(status(() => apply(s, A, open, MEMBER_OPS.removed, { members: [B] }))).toBe('conflict'); // B inherits from the root
    expect(status(() => apply(s, A, nsId, MEMBER_OPS.removed, { members: ['dd'.repeat(32)] }))).toBe('not_found');
  });
});

describe('roles and auto-follow', () => {
  it('sets a role; refuses TEE roles 400, non-admins 403, demoting the last admin 409, locked TEE members 403', () => {
    const { ns, nsId } = world();
    let s = apply(ns, A, nsId, MEMBER_OPS.added, { members: [{ account: B, role: 'Member' }] }).ns;
    s = apply(s, A, nsId, MEMBER_OPS.roleSet, { account: B, role: 'ReadOnly' }).ns;
    expect(s.groups[nsId]!.members[B]!.role).toBe('ReadOnly');
    expect(status(() => apply(s, A, nsId, MEMBER_OPS.roleSet, { account: B, role: 'ReadOnlyTee' }))).toBe('bad_request');
    expect(status(() => apply(s, B, nsId, MEMBER_OPS.roleSet, { account: B, role: 'Admin' }))).toBe('forbidden');
    expect(status(() => apply(s, A, nsId, MEMBER_OPS.roleSet, { account: A, role: 'Member' }))).toBe('conflict');
    s.groups[nsId]!.members[C] = { role: 'RelayTee', autoFollow: { contexts: true, subgroups: false }, metadata: null, joinedAt: 1 };
    expect(status(() => apply(s, A, nsId, MEMBER_OPS.roleSet, { account: C, role: 'Member' }))).toBe('forbidden');
  });

  it('auto-follow: self or admin; others 403; non-member 404', () => {
    const { ns, nsId } = world();
    const s = apply(ns, A, nsId, MEMBER_OPS.added, { members: [{ account: B, role: 'Member' }, { account: C, role: 'Member' }] }).ns;
    const r = apply(s, B, nsId, MEMBER_OPS.autoFollowSet, { account: B, contexts: false, subgroups: true });
    expect(r.ns.groups[nsId]!.members[B]!.autoFollow).toEqual({ contexts: false, subgroups: true });
    expect(status(() => apply(s, B, nsId, MEMBER_OPS.autoFollowSet, { account: C, contexts: false, subgroups: true }))).toBe('forbidden');
    expect(status(() => apply(s, A, nsId, MEMBER_OPS.autoFollowSet, { account: 'dd'.repeat(32), contexts: true, subgroups: true }))).toBe('not_found');
  });
});

describe('leave and join via inheritance', () => {
  it('a non-owner leaves with MemberRemoved; root 400, owner 403, not direct 409, last admin 409', () => {
    const { ns, nsId, open, closed } = world();
    const s = apply(ns, A, nsId, MEMBER_OPS.added, { members: [{ account: B, role: 'Member' }] }).ns;
    s.groups[closed]!.members[B] = { role: 'Member', autoFollow: { contexts: true, subgroups: false }, metadata: null, joinedAt: 1 };
    const r = apply(s, B, closed, MEMBER_OPS.left, {});
    expect(r.ns.groups[closed]!.members[B]).toBeUndefined();
    expect(r.events).toEqual([{ groupId: closed, kind: 'MemberRemoved', data: { memberAccount: B } }]);
    expect(status(() => apply(s, B, nsId, MEMBER_OPS.left, {}))).toBe('bad_request');
    expect(status(() => apply(s, A, open, MEMBER_OPS.left, {}))).toBe('forbidden');
    expect(status(() => apply(s, B, open, MEMBER_OPS.left, {}))).toBe('conflict');
    s.groups[open]!.owner = C; // A is then the last admin of `open` without owning it
    expect(status(() => apply(s, A, open, MEMBER_OPS.left, {}))).toBe('conflict');
  });

  it('records a direct row in an open subgroup with MemberJoined (no role); restricted or no path 403', () => {
    const { ns, nsId, open, closed, deep } = world();
    const s = apply(ns, A, nsId, MEMBER_OPS.added, { members: [{ account: B, role: 'Member' }] }).ns;
    const r = apply(s, B, deep, MEMBER_OPS.joinedOpen, {});
    expect(r.ns.groups[deep]!.members[B]).toMatchObject({ role: 'Member' });
    expect(r.events).toEqual([{ groupId: deep, kind: 'MemberJoined', data: { memberAccount: B } }]);
    expect(status(() => apply(s, B, closed, MEMBER_OPS.joinedOpen, {}))).toBe('forbidden');
    expect(status(() => apply(s, C, open, MEMBER_OPS.joinedOpen, {}))).toBe('forbidden');
    s.groups[nsId]!.members[B]!.capabilities = 0; // the anchor no longer grants CAN_JOIN_OPEN_SUBGROUPS
    expect(status(() => apply(s, B, open, MEMBER_OPS.joinedOpen, {}))).toBe('forbidden');
  });
});

describe('tree: reparent, cascade delete, context detach', () => {
  it('reparents; root 400, self 400, cycle 409, missing target 404, non-admin 403', () => {
    const { ns, nsId, open, closed, deep } = world();
    expect(apply(ns, A, deep, MEMBER_OPS.reparented, { newParentId: closed }).ns.groups[deep]!.parentId).toBe(closed);
    expect(status(() => apply(ns, A, nsId, MEMBER_OPS.reparented, { newParentId: open }))).toBe('bad_request');
    expect(status(() => apply(ns, A, open, MEMBER_OPS.reparented, { newParentId: open }))).toBe('bad_request');
    expect(status(() => apply(ns, A, open, MEMBER_OPS.reparented, { newParentId: deep }))).toBe('conflict');
    expect(status(() => apply(ns, A, open, MEMBER_OPS.reparented, { newParentId: 'dd'.repeat(32) }))).toBe('not_found');
    const s = apply(ns, A, nsId, MEMBER_OPS.added, { members: [{ account: B, role: 'Member' }] }).ns;
    expect(status(() => apply(s, B, deep, MEMBER_OPS.reparented, { newParentId: closed }))).toBe('forbidden');
  });

  it('deletes a subtree; root 400, diverging cascade 409, CAN_DELETE_SUBGROUP on the parent suffices', () => {
    const { ns, nsId, open, deep } = world();
    const r = apply(ns, A, open, MEMBER_OPS.cascadeDeleted, { groupIds: [open, deep] });
    expect(Object.keys(r.ns.groups)).not.toContain(open);
    expect(Object.keys(r.ns.groups)).not.toContain(deep);
    expect(status(() => apply(ns, A, nsId, MEMBER_OPS.cascadeDeleted, { groupIds: [nsId] }))).toBe('bad_request');
    expect(status(() => apply(ns, A, open, MEMBER_OPS.cascadeDeleted, { groupIds: [open] }))).toBe('conflict');
    const s = apply(ns, A, nsId, MEMBER_OPS.added, { members: [{ account: B, role: 'Member' }] }).ns;
    expect(status(() => apply(s, B, deep, MEMBER_OPS.cascadeDeleted, { groupIds: [deep] }))).toBe('forbidden');
    s.groups[open]!.members[B] = { role: 'Member', capabilities: CAP.CAN_DELETE_SUBGROUP, autoFollow: { contexts: true, subgroups: false }, metadata: null, joinedAt: 1 };
    expect(status(() => apply(s, B, deep, MEMBER_OPS.cascadeDeleted, { groupIds: [deep] }))).toBe('ok');
  });

  it('detaches a registered context (admin); unknown context 404; non-admin 403', () => {
    const { ns, nsId } = world();
    const ctx = 'cc'.repeat(32);
    ns.groups[nsId]!.contexts[ctx] = { metadata: null, registeredAt: 1 };
    expect(apply(ns, A, nsId, MEMBER_OPS.contextDetached, { contextId: ctx }).ns.groups[nsId]!.contexts).toEqual({});
    expect(status(() => apply(ns, A, nsId, MEMBER_OPS.contextDetached, { contextId: 'dd'.repeat(32) }))).toBe('not_found');
    const s = apply(ns, A, nsId, MEMBER_OPS.added, { members: [{ account: B, role: 'Member' }] }).ns;
    expect(status(() => apply(s, B, nsId, MEMBER_OPS.contextDetached, { contextId: ctx }))).toBe('forbidden');
  });
});
