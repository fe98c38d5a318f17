/**
 * The context registration appliers: who may register (admin, CAN_CREATE_CONTEXT, not read-only),
 * one registration per context in a namespace, and deregistration by admins only.
 */
import { describe, expect, it } from 'vitest';
import { namespaceIdOf } from '../crypto/ids.ts';
import { HearthError } from '../errors.ts';
import { emptyNamespace } from '../governance/genesis.ts';
import { createAppliers } from '../governance/ops.ts';
import { CAP, type GovOp, type NamespaceState } from '../governance/types.ts';
import { CONTEXT_OPS, registerContextOps } from './ops.ts';

const registry = createAppliers(registerContextOps);
const A = 'a1'.repeat(32);
const B = 'b2'.repeat(32);
const APP = 'ee'.repeat(32);
const CTX = 'c0'.repeat(32);

function apply(ns: NamespaceState, account: string, groupId: string, kind: string, body: Record<string, unknown>): NamespaceState {
  const draft = structuredClone(ns);
  const op = { namespaceId: ns.id, groupId, account, kind, body, timestampMs: 5_000, seq: '1', parents: [], signer: '', nonce: '1', id: '', signature: '' } as GovOp;
  registry.get(kind)({ ns: draft, op, emit: () => undefined });
  return draft;
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

function founded(): NamespaceState {
  const salt = '11'.repeat(32);
  const id = namespaceIdOf(A, salt);
  const body = { salt, applicationId: APP, appKey: APP };
  return apply(emptyNamespace(id, A, body, 1), A, id, 'namespace.created', body);
}

describe('context registration ops', () => {
  it('an admin registers once; a second registration of the same context is 409', () => {
    const ns = founded();
    const s = apply(ns, A, ns.id, CONTEXT_OPS.registered, { contextId: CTX, applicationId: APP, name: 'chat' });
    expect(s.groups[ns.id].contexts[CTX]).toEqual({ name: 'chat', metadata: null, registeredAt: 5_000 });
    expect(kind(() => apply(s, A, ns.id, CONTEXT_OPS.registered, { contextId: CTX, applicationId: APP }))).toBe('conflict');
    expect(kind(() => apply(ns, A, ns.id, CONTEXT_OPS.registered, { contextId: 'nope', applicationId: APP }))).toBe('bad_request');
  });

  it('keeps the bundle blob a registration names (what joiners lacking the application fetch); a malformed one is left out', () => {
    const ns = founded();
    const blob = 'b1'.repeat(32);
    const s = apply(ns, A, ns.id, CONTEXT_OPS.registered, { contextId: CTX, applicationId: APP, bundleBlobId: blob });
    expect(s.groups[ns.id].contexts[CTX]).toEqual({ metadata: null, registeredAt: 5_000, bundleBlobId: blob });
    const bad = apply(ns, A, ns.id, CONTEXT_OPS.registered, { contextId: CTX, applicationId: APP, bundleBlobId: '../x' });
    expect(bad.groups[ns.id].contexts[CTX]).toEqual({ metadata: null, registeredAt: 5_000 });
  });

  it('a member needs CAN_CREATE_CONTEXT; a read-only member and a stranger are refused', () => {
    const ns = apply(founded(), A, founded().id, 'group.member_added', { members: [{ account: B, role: 'Member' }] });
    const g = ns.id;
    ns.groups[g].members[B].capabilities = 0;
    expect(kind(() => apply(ns, B, g, CONTEXT_OPS.registered, { contextId: CTX, applicationId: APP }))).toBe('forbidden');
    ns.groups[g].members[B].capabilities = CAP.CAN_CREATE_CONTEXT;
    expect(kind(() => apply(ns, B, g, CONTEXT_OPS.registered, { contextId: CTX, applicationId: APP }))).toBe('ok');
    ns.groups[g].members[B].role = 'ReadOnly';
    expect(kind(() => apply(ns, B, g, CONTEXT_OPS.registered, { contextId: CTX, applicationId: APP }))).toBe('forbidden');
    expect(kind(() => apply(ns, 'dd'.repeat(32), g, CONTEXT_OPS.registered, { contextId: CTX, applicationId: APP }))).toBe('forbidden');
  });

  it('only an admin deregisters; an unregistered context is 404', () => {
    let ns = founded();
    ns = apply(ns, A, ns.id, 'group.member_added', { members: [{ account: B, role: 'Member' }] });
    ns = apply(ns, A, ns.id, CONTEXT_OPS.registered, { contextId: CTX, applicationId: APP });
    expect(kind(() => apply(ns, B, ns.id, CONTEXT_OPS.deregistered, { contextId: CTX }))).toBe('forbidden');
    const s = apply(ns, A, ns.id, CONTEXT_OPS.deregistered, { contextId: CTX });
    expect(s.groups[ns.id].contexts).toEqual({});
    expect(kind(() => apply(s, A, ns.id, CONTEXT_OPS.deregistered, { contextId: CTX }))).toBe('not_found');
  });
});
