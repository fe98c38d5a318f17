/**
 * Governance ops a relay publishes for a member under a warrant (admin-wire-b §8.3, §8.5; domain.md
 * §4.7). The relay's node signs the op as its own account; the applier — run by every node that
 * applies the op — re-checks the whole delegation from the bytes the op carries and then applies the
 * member's op *as the member*, so the member's own authority decides it:
 *
 * 1. the warrant and the author's device credential verify (400);
 * 2. the warrant names this op's scope, and the publishing account and key as its executor (403);
 * 3. it commits to exactly this op (403);
 * 4. the publisher may act for members on the scope group or an ancestor (403);
 * 5. its nonce is fresh for the author device, then spent in the namespace state (400);
 * 6. the member's op runs through its own applier with the member as the author.
 *
 * Expiry is not judged here: only the relay reads a clock. Deterministic: signatures and hashes
 * only, no clock, no I/O.
 *
 * - `delegated.context.registered` `{contextId, applicationId, name?, warrant, authorProof}`:
 *   a context created under a ContextCreationWarrant (its id derives from the warrant's seed).
 * - `delegated.governance` `{warrant, authorProof, op}`: a GovernanceWarrant and the delegable op
 *   (hex of its bytes; delegable.ts).
 */
import { keyFromSeed } from '../crypto/seeded-keys.ts';
import { CONTEXT_OPS } from '../contexts/index.ts';
import { badRequest, forbidden } from '../errors.ts';
import { type ApplierRegistry, type ApplyContext, groupOf, type NamespaceState, requireAuthorship } from '../governance/index.ts';
import { decodeDelegableOp } from './delegable.ts';
import { requireFresh, spend } from './nonces.ts';
import { authenticate, requireDeviceNotRevoked, requireExecutor } from './verify.ts';
import { decodeCreationWarrant, decodeGovernanceWarrant, hexField, opHash, type WarrantCommon } from './warrants.ts';

export const DELEGATED_OPS = {
  contextRegistered: 'delegated.context.registered',
  governance: 'delegated.governance',
} as const;

/** The nonce ledger key of an author device in a scope. */
export const nonceKey = (scope: string, authorDeviceKey: string) => `${scope}/${authorDeviceKey}`;

function spendNonce(ns: NamespaceState, scope: string, w: WarrantCommon): void {
  const key = nonceKey(scope, w.authorDeviceKey);
  const ledger = ns.delegatedNonces?.[key];
  requireFresh(ledger, w.nonce);
  ns.delegatedNonces = { ...ns.delegatedNonces, [key]: spend(ledger, w.nonce) };
}

export function registerDelegationOps(registry: ApplierRegistry): void {
  registry.register(DELEGATED_OPS.contextRegistered, (ctx: ApplyContext) => {
    const { ns, op } = ctx;
    const b = op.body;
    const { warrant: w } = authenticate(b.warrant, b.authorProof, decodeCreationWarrant);
    if (w.group !== op.groupId) throw forbidden(`this warrant creates a context in group ${w.group}, not in ${op.groupId}`);
    requireExecutor(w, op.account, op.signer);
    if (typeof b.contextId !== 'string' || keyFromSeed(Buffer.from(w.seed, 'hex')).publicKey !== b.contextId) throw badRequest("contextId does not derive from the warrant's seed");
    if (b.applicationId !== w.applicationId) throw badRequest('applicationId is not the one the warrant names');
    if ((b.name ?? null) !== w.name) throw badRequest('name is not the one the warrant names');
    const group = groupOf(ns, op.groupId);
    requireAuthorship(ns, group, op.account);
    requireDeviceNotRevoked(ns.deviceBindings?.[w.authorAccount], w);
    spendNonce(ns, group.id, w);
    registry.get(CONTEXT_OPS.registered)({
      ...ctx,
      op: { ...op, kind: CONTEXT_OPS.registered, account: w.authorAccount, body: { contextId: b.contextId, applicationId: w.applicationId, ...(w.name !== null ? { name: w.name } : {}), ...(b.bundleBlobId !== undefined ? { bundleBlobId: b.bundleBlobId } : {}) } },
    });
  });

  registry.register(DELEGATED_OPS.governance, (ctx: ApplyContext) => {
    const { ns, op } = ctx;
    const { warrant: w } = authenticate(op.body.warrant, op.body.authorProof, decodeGovernanceWarrant);
    if (typeof op.body.op !== 'string') throw badRequest('op must be the hex of the delegable op');
    const bytes = hexField(op.body.op, 'op');
    const scope = w.kind === 'Root' ? ns.id : op.groupId;
    if (w.scope !== scope) throw forbidden(`this warrant is scoped to ${w.scope}, not to ${scope}`);
    requireExecutor(w, op.account, op.signer);
    if (opHash(w.kind, bytes) !== w.opHash) throw forbidden('this warrant does not cover the op presented with it');
    const inner = decodeDelegableOp(bytes, w.kind, w.scope);
    if (inner.groupId !== op.groupId) throw badRequest(`the op acts on group ${inner.groupId}, but is published on ${op.groupId}`);
    requireAuthorship(ns, groupOf(ns, w.scope), op.account);
    requireDeviceNotRevoked(ns.deviceBindings?.[w.authorAccount], w);
    spendNonce(ns, w.scope, w);
    registry.get(inner.kind)({ ...ctx, op: { ...op, kind: inner.kind, account: w.authorAccount, body: inner.body } });
  });
}
