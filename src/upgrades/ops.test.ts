/**
 * The upgrade appliers as every node replays them: pure functions of (state, op) that refuse a
 * hostile body with a 400, check the author's MANAGE_APPLICATION and the group tree, and record
 * the upgrade and the pinned bundle on each group.
 */
import { describe, expect, it } from 'vitest';
import { namespaceIdOf, subgroupIdOf } from '../crypto/ids.ts';
import { emptyNamespace } from '../governance/genesis.ts';
import { opApplier, refusalOf } from '../governance/testkit.ts';
import type { NamespaceState } from '../governance/types.ts';
import { registerUpgradeOps } from './ops.ts';
import { UPGRADE_OPS } from './types.ts';

const applyOp = opApplier(registerUpgradeOps);
const A = 'a1'.repeat(32);
const B = 'b2'.repeat(32);
const APP = 'ee'.repeat(32);
const V1 = '01'.repeat(32);
const V2 = '02'.repeat(32);

function apply(ns: NamespaceState, account: string, groupId: string, kind: string, body: Record<string, unknown>): NamespaceState {
  return applyOp(ns, groupId, kind, body, { account, signer: 'k'.repeat(64) });
}

/** The refusal's error kind, or `ok`. */
const refusal = (fn: () => unknown) => refusalOf(fn).split(':')[0];

function world(): { ns: NamespaceState; sub: string } {
  const salt = '11'.repeat(32);
  const id = namespaceIdOf(A, salt);
  const g = { salt, applicationId: APP, appKey: V1 };
  let ns = apply(emptyNamespace(id, A, g, 1), A, id, 'namespace.created', g);
  const subSalt = '22'.repeat(32);
  const sub = subgroupIdOf(A, id, false, subSalt);
  ns = apply(ns, A, id, 'group.created', { groupId: sub, parentId: id, salt: subSalt, visibility: 'open' });
  ns = apply(ns, A, id, 'group.member_added', { members: [{ account: B, role: 'Member' }] });
  return { ns, sub };
}

const body = (groupIds: string[], over: Record<string, unknown> = {}) => ({
  groupIds,
  targetApplicationId: APP,
  fromVersion: '1.0.0',
  toVersion: '2.0.0',
  fromAppKey: V1,
  toAppKey: V2,
  toStateVersion: 2,
  cascade: groupIds.length > 1,
  ...over,
});

describe('group.upgrade.set', () => {
  it('records the upgrade and pins the target on every listed group, identically on every replay', () => {
    const { ns, sub } = world();
    const a = apply(ns, A, ns.id, UPGRADE_OPS.set, body([ns.id, sub]));
    const b = apply(ns, A, ns.id, UPGRADE_OPS.set, body([ns.id, sub]));
    expect(a).toEqual(b);
    for (const g of [ns.id, sub]) {
      expect(a.groups[g].appKey).toBe(V2);
      expect(a.groups[g].upgrade).toMatchObject({ requestedOn: ns.id, cascade: true, fromVersion: '1.0.0', toVersion: '2.0.0', fromAppKey: V1, toAppKey: V2, initiatedAt: 7, toStateVersion: 2 });
    }
    expect(refusal(() => apply(a, A, ns.id, UPGRADE_OPS.set, body([ns.id])))).toBe('conflict'); // already targets V2
  });

  it('refuses hostile bodies with 400 and never throws anything else', () => {
    const { ns, sub } = world();
    for (const bad of [
      {},
      body([]),
      body(['nope']),
      body([ns.id], { toAppKey: 42 }),
      body([ns.id], { toStateVersion: -1 }),
      body([ns.id], { toStateVersion: 2 ** 33 }),
      body([ns.id], { cascade: 'yes' }),
      body([ns.id], { fromVersion: '' }),
      body([sub, ns.id]), // must start with the group it is published on
      body([ns.id, ns.id]),
      body([ns.id, 'cd'.repeat(32)]), // not below the asked group
    ]) {
      expect(refusal(() => apply(ns, A, ns.id, UPGRADE_OPS.set, bad as Record<string, unknown>))).toBe('bad_request');
    }
  });

  it('needs MANAGE_APPLICATION and the same application; a subgroup op cannot reach its parent', () => {
    const { ns, sub } = world();
    expect(refusal(() => apply(ns, B, ns.id, UPGRADE_OPS.set, body([ns.id])))).toBe('forbidden');
    const caps = structuredClone(ns);
    caps.groups[ns.id].members[B].capabilities = 16; // MANAGE_APPLICATION
    expect(refusal(() => apply(caps, B, ns.id, UPGRADE_OPS.set, body([ns.id])))).toBe('ok');
    expect(refusal(() => apply(ns, A, ns.id, UPGRADE_OPS.set, body([ns.id], { targetApplicationId: 'ff'.repeat(32) })))).toBe('conflict');
    expect(refusal(() => apply(ns, A, sub, UPGRADE_OPS.set, body([sub, ns.id])))).toBe('bad_request');
  });
});

describe('group.upgrade.aborted', () => {
  it('points every pending upgrade back at its previous bundle, once', () => {
    const { ns, sub } = world();
    const upgraded = apply(ns, A, ns.id, UPGRADE_OPS.set, body([ns.id, sub]));
    expect(refusal(() => apply(upgraded, B, ns.id, UPGRADE_OPS.aborted, {}))).toBe('forbidden');
    expect(refusal(() => apply(upgraded, A, sub, UPGRADE_OPS.aborted, {}))).toBe('bad_request');
    const aborted = apply(upgraded, A, ns.id, UPGRADE_OPS.aborted, {});
    for (const g of [ns.id, sub]) {
      expect(aborted.groups[g].appKey).toBe(V1);
      expect(aborted.groups[g].upgrade?.aborted).toEqual({ at: 7, by: A });
    }
    expect(refusal(() => apply(aborted, A, ns.id, UPGRADE_OPS.aborted, {}))).toBe('conflict');
    expect(refusal(() => apply(ns, A, ns.id, UPGRADE_OPS.aborted, {}))).toBe('conflict');
  });
});
