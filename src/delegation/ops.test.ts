/**
 * The delegated appliers as every node replays them: the whole delegation is re-checked from the
 * op's bytes (authenticity 400, scope/executor/commitment 403, the publisher's standing 403, the
 * nonce 400), then the member's op applies with the member as its author.
 */
import { describe, expect, it } from 'vitest';
import { keyFromSeed } from '../crypto/seeded-keys.ts';
import { namespaceIdOf } from '../crypto/ids.ts';
import { emptyNamespace } from '../governance/genesis.ts';
import { opApplier, refusalOf as refusal } from '../governance/testkit.ts';
import { CAP, type NamespaceState } from '../governance/types.ts';
import { creationWarrant, delegableOp, governanceWarrant, member } from '../../test/helpers/delegation.ts';
import { registerContextOps } from '../contexts/ops.ts';
import { DELEGATED_OPS, registerDelegationOps } from './ops.ts';

const applyOp = opApplier(registerContextOps, registerDelegationOps);

const R = 'a1'.repeat(32); // the relay's account (namespace admin)
const KEY = 'a2'.repeat(32); // the relay's signing key
const APP = 'ee'.repeat(32);
const alice = member(0x61);
const relay = { executor: R, executorKey: KEY };

function apply(ns: NamespaceState, groupId: string, kind: string, body: Record<string, unknown>, publisher = { account: R, signer: KEY }): NamespaceState {
  return applyOp(ns, groupId, kind, body, { ...publisher, timestampMs: 9_000 });
}

function world(): NamespaceState {
  const salt = '11'.repeat(32);
  const id = namespaceIdOf(R, salt);
  const g = { salt, applicationId: APP, appKey: APP };
  let ns = apply(emptyNamespace(id, R, g, 1), id, 'namespace.created', g);
  ns = apply(ns, id, 'group.member_added', { members: [{ account: alice.account, role: 'Member' }] });
  ns.groups[id].members[R].capabilities = CAP.CAN_AUTHOR_ON_BEHALF;
  return ns;
}

const metadataOp = delegableOp({ kind: 'metadata.set', body: { target: 'group', name: 'by alice', data: {} } });
const gov = (ns: NamespaceState, nonce: bigint, over: Partial<Parameters<typeof governanceWarrant>[1]> = {}, op = metadataOp) => ({
  warrant: governanceWarrant(alice, { ...relay, scope: ns.id, kind: 'Group', op, nonce, ...over }),
  authorProof: alice.authorProof,
  op: op.toString('hex'),
});

describe('delegated.governance', () => {
  it("applies the member's op as the member, checked against the member's capabilities, and spends the nonce", () => {
    const ns = world();
    expect(refusal(() => apply(ns, ns.id, DELEGATED_OPS.governance, gov(ns, 1n)))).toMatch(/^forbidden: .*CAN_MANAGE_METADATA/);
    ns.groups[ns.id].members[alice.account].capabilities = CAP.CAN_MANAGE_METADATA;
    const after = apply(ns, ns.id, DELEGATED_OPS.governance, gov(ns, 1n));
    expect(after.groups[ns.id].metadata).toMatchObject({ name: 'by alice', updatedBy: alice.account });
    expect(after.delegatedNonces).toEqual({ [`${ns.id}/${alice.device.publicKey}`]: { max: '1', spent: ['1'] } });
    expect(refusal(() => apply(after, ns.id, DELEGATED_OPS.governance, gov(ns, 1n)))).toMatch(/^bad_request: .*already spent/);
    expect(apply(ns, ns.id, DELEGATED_OPS.governance, gov(ns, 1n))).toEqual(after); // deterministic
  });

  it('re-checks everything a hostile op could fake', () => {
    const ns = world();
    ns.groups[ns.id].members[alice.account].capabilities = CAP.CAN_MANAGE_METADATA;
    const ok = gov(ns, 5n);
    expect(refusal(() => apply(ns, ns.id, DELEGATED_OPS.governance, { ...ok, warrant: 'zz' }))).toMatch(/^bad_request/);
    expect(refusal(() => apply(ns, ns.id, DELEGATED_OPS.governance, { ...ok, warrant: 42 }))).toMatch(/^bad_request/);
    expect(refusal(() => apply(ns, ns.id, DELEGATED_OPS.governance, { ...ok, authorProof: member(0x71).authorProof }))).toMatch(/^bad_request: delegation does not verify/);
    expect(refusal(() => apply(ns, ns.id, DELEGATED_OPS.governance, { ...ok, op: delegableOp({ kind: 'metadata.set', body: { target: 'group', data: {} } }).toString('hex') }))).toMatch(
      /^forbidden: .*does not cover the op/,
    );
    expect(refusal(() => apply(ns, ns.id, DELEGATED_OPS.governance, ok, { account: 'b3'.repeat(32), signer: KEY }))).toMatch(/^forbidden: .*executor account/);
    expect(refusal(() => apply(ns, ns.id, DELEGATED_OPS.governance, ok, { account: R, signer: 'b4'.repeat(32) }))).toMatch(/^forbidden: .*executor key/);
    const noGrant = structuredClone(ns);
    noGrant.groups[ns.id].members[R].capabilities = 0;
    expect(refusal(() => apply(noGrant, ns.id, DELEGATED_OPS.governance, ok))).toMatch(/^forbidden: .*CAN_AUTHOR_ON_BEHALF/);
    const nested = delegableOp({ kind: DELEGATED_OPS.governance, body: {} });
    expect(refusal(() => apply(ns, ns.id, DELEGATED_OPS.governance, gov(ns, 6n, {}, nested)))).toMatch(/^forbidden: .*not delegable/);
  });
});

describe('delegated.context.registered', () => {
  const seed = '3d'.repeat(32);
  const contextId = keyFromSeed(Buffer.from(seed, 'hex')).publicKey;
  const body = (ns: NamespaceState, nonce: bigint, over: Record<string, unknown> = {}) => ({
    contextId,
    applicationId: APP,
    warrant: creationWarrant(alice, { ...relay, group: ns.id, seed, applicationId: APP, nonce }),
    authorProof: alice.authorProof,
    ...over,
  });

  it('registers the context as the member once the member may create contexts', () => {
    const ns = world();
    expect(refusal(() => apply(ns, ns.id, DELEGATED_OPS.contextRegistered, body(ns, 1n)))).toMatch(/^forbidden: .*CAN_CREATE_CONTEXT/);
    ns.groups[ns.id].members[alice.account].capabilities = CAP.CAN_CREATE_CONTEXT;
    expect(refusal(() => apply(ns, ns.id, DELEGATED_OPS.contextRegistered, body(ns, 1n, { contextId: 'c1'.repeat(32) })))).toMatch(/^bad_request: contextId does not derive/);
    expect(refusal(() => apply(ns, ns.id, DELEGATED_OPS.contextRegistered, body(ns, 1n, { name: 'other' })))).toMatch(/^bad_request: name/);
    const after = apply(ns, ns.id, DELEGATED_OPS.contextRegistered, body(ns, 1n));
    expect(after.groups[ns.id].contexts[contextId]).toEqual({ metadata: null, registeredAt: 9_000 });
    expect(refusal(() => apply(after, ns.id, DELEGATED_OPS.contextRegistered, body(ns, 2n)))).toMatch(/^conflict/);
  });
});
