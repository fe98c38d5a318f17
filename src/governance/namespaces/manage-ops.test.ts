/**
 * The namespace lifecycle and account device appliers against states built from genesis ops, with
 * several accounts (paths one node reaches only with other routes' help), and the scope rule.
 */
import { expect, it } from 'vitest';
import { namespaceIdOf } from '../../crypto/ids.ts';
import { HearthError } from '../../errors.ts';
import { emptyNamespace } from '../genesis.ts';
import { registerDeviceOps } from '../../accounts/device-ops.ts';
import { createAppliers } from '../ops.ts';
import type { GovOp, NamespaceState } from '../types.ts';
import { inAccountScope } from './scope.ts';

const registry = createAppliers(registerDeviceOps);
const A = 'a1'.repeat(32);
const B = 'b2'.repeat(32);
const APP = 'ee'.repeat(32);
const DEV = 'd4'.repeat(32);

function apply(ns: NamespaceState, account: string, kind: string, body: Record<string, unknown> = {}) {
  const draft = structuredClone(ns);
  const events: string[] = [];
  const op = { namespaceId: ns.id, groupId: ns.id, account, kind, body, timestampMs: 7_000, seq: '1', parents: [], signer: '', nonce: '1', id: '', signature: '' } as GovOp;
  registry.get(kind)({ ns: draft, op, emit: (_g, k) => events.push(k) });
  return { ns: draft, events };
}

function kind(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    if (e instanceof HearthError) return e.kind;
    throw e;
  }
  return 'ok';
}

/** Founded by A; B is a second Admin of the root. */
function world(): NamespaceState {
  const salt = '11'.repeat(32);
  const id = namespaceIdOf(A, salt);
  const ns = apply(emptyNamespace(id, A, { salt, applicationId: APP, appKey: APP }, 1), A, 'namespace.created', { salt, applicationId: APP, appKey: APP }).ns;
  ns.groups[id]!.members[B] = { role: 'Admin', autoFollow: { contexts: true, subgroups: false }, metadata: null, joinedAt: 2 };
  return ns;
}

it('namespace.deleted: root admins only', () => {
  const ns = world();
  expect(kind(() => apply(ns, B, 'namespace.deleted'))).toBe('ok');
  ns.groups[ns.id]!.members[B]!.role = 'Member';
  expect(kind(() => apply(ns, B, 'namespace.deleted'))).toBe('forbidden');
});

it('namespace.left: a member leaves every group and drops out of scope; the owner and non-members cannot', () => {
  const ns = world();
  expect(inAccountScope(ns, B)).toBe(true);
  const { ns: after, events } = apply(ns, B, 'namespace.left');
  expect(after.groups[ns.id]!.members[B]).toBeUndefined();
  expect(events).toEqual(['MemberRemoved']);
  expect(inAccountScope(after, B)).toBe(false);
  expect(kind(() => apply(after, B, 'namespace.left'))).toBe('forbidden');
  expect(kind(() => apply(ns, A, 'namespace.left'))).toBe('forbidden');
  const hidden = { ...world(), hidden: true };
  expect(inAccountScope(hidden, A)).toBe(false);
});

it('account device ops: an account links, unlinks and revokes only its own devices, forward-only', () => {
  const ns = world();
  expect(kind(() => apply(ns, A, 'account.device.linked', { account: B, deviceId: DEV, signingKey: DEV }))).toBe('forbidden');
  expect(kind(() => apply(ns, 'ff'.repeat(32), 'account.device.linked', { account: 'ff'.repeat(32), deviceId: DEV, signingKey: DEV }))).toBe('forbidden');
  const linked = apply(ns, A, 'account.device.linked', { account: A, deviceId: DEV, signingKey: DEV }).ns;
  expect(linked.deviceBindings?.[A]?.[DEV]).toEqual({ signingKey: DEV, linkedAt: 7_000 });
  expect(kind(() => apply(linked, A, 'account.device.linked', { account: A, deviceId: DEV, signingKey: DEV }))).toBe('conflict');
  expect(apply(linked, A, 'account.device.unlinked', { account: A, deviceId: DEV }).ns.deviceBindings?.[A]?.[DEV]).toBeUndefined();
  const revoked = apply(linked, A, 'account.device.revoked', { account: A, deviceId: DEV }).ns;
  expect(revoked.deviceBindings?.[A]?.[DEV]?.revokedAt).toBe(7_000);
  expect(kind(() => apply(revoked, A, 'account.device.linked', { account: A, deviceId: DEV, signingKey: DEV }))).toBe('forbidden');
  expect(kind(() => apply(revoked, A, 'account.device.unlinked', { account: A, deviceId: DEV }))).toBe('conflict');
});
