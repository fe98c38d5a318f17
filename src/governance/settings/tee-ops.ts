/**
 * The TEE policies of a namespace (admin spec "TEE resources", "Authentication" rule 4;
 * admin-wire-b §5.1–§5.2, §6.4–§6.5): the admission policy (measurements or signed-release form)
 * and the authoring policy. Both live on the namespace root, are set by an admin of it, and are
 * root-guarded with that admin's own root: the op carries a `rootProof` over the borsh bytes of the
 * op as the reference builds them, the applier verifies it against the root's `ownerOpCounter` and
 * advances the counter by one.
 */
import { badRequest } from '../../errors.ts';
import type { ApplierRegistry } from '../appliers.ts';
import { groupOf, requireAdmin } from '../authority.ts';
import { BorshWriter } from '../../codec/borsh.ts';
import { advanceOwnerOpCounter, opDigestOf, verifyRootProof, type OwnerOpKind } from '../root-guard.ts';
import { recordRootProof } from '../proofs/roots.ts';
import type { GroupState, NamespaceState, Role } from '../types.ts';
import { validateAdmissionPolicy, validateAuthoringPolicy, type TeeAdmissionPolicy } from './validate.ts';

export const TEE_OPS = {
  admission: 'tee.admission-policy.set',
  authoring: 'tee.authoring-policy.set',
} as const;

/** The namespace root a TEE policy is set on; a subgroup is a 400 (§1.4 `TeePolicyNotOnSubgroup`). */
export function policyRoot(ns: NamespaceState, group: GroupState, which: 'admission' | 'authoring'): GroupState {
  if (group.parentId !== null || group.id !== ns.id) {
    const refusal = which === 'admission' ? 'TeePolicyNotOnSubgroup' : 'TeeAuthoringPolicyNotOnSubgroup';
    throw badRequest(`${refusal}: the TEE ${which} policy is set on the namespace root ${ns.id}, not on subgroup '${group.id}'`);
  }
  return group;
}

const strings = (w: BorshWriter, list: string[]) => w.vec(list, (w2, s) => w2.string(s));

/** borsh(op) of the admission policy (§5.2: TeeAdmissionPolicySetV2 #37 / TeeReleaseAdmissionPolicySetV2 #38). */
export function admissionOp(policy: TeeAdmissionPolicy): { kind: OwnerOpKind; digest: string } {
  const w = new BorshWriter();
  const mode = policy.mode === 'relay' ? 1 : 0;
  if (policy.signedRelease) {
    w.u8(0x26);
    strings(w, policy.signedRelease.allowedProfiles);
    w.option(policy.signedRelease.minReleaseVersion, (w2, v) => w2.string(v));
    strings(w, policy.allowedTcbStatuses);
    w.bool(policy.acceptMock).u8(mode);
    return { kind: 'TeeReleaseAdmissionPolicy', digest: opDigestOf(w.toBuffer()) };
  }
  w.u8(0x25);
  for (const list of [policy.allowedMrtd, policy.allowedRtmr0, policy.allowedRtmr1, policy.allowedRtmr2, policy.allowedRtmr3, policy.allowedTcbStatuses]) {
    strings(w, list);
  }
  w.bool(policy.acceptMock).u8(mode);
  return { kind: 'TeeAdmissionPolicy', digest: opDigestOf(w.toBuffer()) };
}

/** borsh(op) of the authoring policy (§5.2: TeeAuthoringPolicySet #33 ‖ Vec<String> allowedMrtd). */
export function authoringOp(allowedMrtd: string[]): { kind: OwnerOpKind; digest: string } {
  return { kind: 'TeeAuthoringPolicy', digest: opDigestOf(strings(new BorshWriter().u8(0x21), allowedMrtd).toBuffer()) };
}

/** The TEE role a mode admits as (§6.4: replica → ReadOnlyTee, relay → RelayTee). */
const teeRole = (mode: TeeAdmissionPolicy['mode']): Role => (mode === 'relay' ? 'RelayTee' : 'ReadOnlyTee');

export function registerTeeOps(registry: ApplierRegistry): void {
  registry.register(TEE_OPS.admission, ({ ns, op }) => {
    const root = policyRoot(ns, groupOf(ns, op.groupId), 'admission');
    requireAdmin(root, op.account);
    const policy = validateAdmissionPolicy((op.body.policy ?? {}) as Record<string, unknown>);
    const { kind, digest } = admissionOp(policy);
    recordRootProof(ns, verifyRootProof({ ns, group: root, kind, opDigest: digest, account: op.account, rootProof: String(op.body.rootProof ?? '') }));
    root.teeAdmissionPolicy = { ...policy };
    // changing the mode converts the TEEs already admitted (§6.4)
    const role = teeRole(policy.mode);
    for (const g of Object.values(ns.groups)) {
      for (const row of Object.values(g.members)) if (row.role === 'ReadOnlyTee' || row.role === 'RelayTee') row.role = role;
    }
    advanceOwnerOpCounter(root);
  });

  registry.register(TEE_OPS.authoring, ({ ns, op }) => {
    const root = policyRoot(ns, groupOf(ns, op.groupId), 'authoring');
    requireAdmin(root, op.account);
    const { allowedMrtd } = validateAuthoringPolicy(op.body.allowedMrtd);
    const { kind, digest } = authoringOp(allowedMrtd);
    recordRootProof(ns, verifyRootProof({ ns, group: root, kind, opDigest: digest, account: op.account, rootProof: String(op.body.rootProof ?? '') }));
    // an empty list switches TEE authorship off (§6.5): nothing is kept
    if (allowedMrtd.length) root.teeAuthoringPolicy = { allowedMrtd };
    else delete root.teeAuthoringPolicy;
    advanceOwnerOpCounter(root);
  });
}
