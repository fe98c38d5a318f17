/**
 * Capabilities, settings and metadata (admin spec "Capabilities, settings and metadata";
 * admin-wire-b §6): reads come from the derived governance state, every write is an op authored
 * as this node's account and judged by the appliers in `ops.ts`. Knows nothing of HTTP.
 */
import type { Governance } from '../log.ts';
import { effectiveCapabilities, requireAdmin, requireMember } from '../authority.ts';
import { rootGuard } from '../root-guard.ts';
import type { GroupState, MetadataRecord, NamespaceState } from '../types.ts';
import { notFound } from '../../errors.ts';
import type { NodeIdentity } from '../../identity/identity.ts';
import { SETTINGS_OPS, type MetadataTarget } from './ops.ts';
import { admissionOp, authoringOp, policyRoot, TEE_OPS } from './tee-ops.ts';
import { validateAdmissionPolicy, validateAuthoringPolicy, type TeeAdmissionPolicy, type Visibility } from './validate.ts';
import { groupInScope } from '../namespaces/scope.ts';

/** GetTeeAdmissionPolicy: the flat policy plus `enabled` (admin-wire-b §6.4). */
export type TeeAdmissionPolicyView = { enabled: boolean } & TeeAdmissionPolicy;

const NO_POLICY: TeeAdmissionPolicy = {
  allowedMrtd: [],
  allowedRtmr0: [],
  allowedRtmr1: [],
  allowedRtmr2: [],
  allowedRtmr3: [],
  allowedTcbStatuses: [],
  acceptMock: false,
  mode: 'replica',
};

export class SettingsService {
  constructor(private readonly d: { governance: Governance; identity: NodeIdentity }) {}

  /** The group, readable by an effective member only (admin-wire-b §11). */
  private readable(groupId: string): { ns: NamespaceState; group: GroupState } {
    const found = groupInScope(this.d.governance, groupId, this.d.identity.accountId);
    requireMember(found.ns, found.group, this.d.identity.accountId);
    return found;
  }

  private submit(groupId: string, kind: string, body: Record<string, unknown>): Promise<unknown> {
    const { ns } = groupInScope(this.d.governance, groupId, this.d.identity.accountId);
    return this.d.governance.submit(ns.id, groupId, kind, body);
  }

  /**
   * A member's capability mask as stored: its override, else the group default (an inherited
   * member reads the default). Admins' implicit powers are their role's, not bits of this mask, so
   * a read-modify-write of the mask never grants bits (notably bit 9) by accident.
   */
  capabilities(groupId: string, account: string): number {
    const { ns, group } = this.readable(groupId);
    if (effectiveCapabilities(ns, group, account) === undefined) throw notFound(`account ${account} is not a member of group '${groupId}'`);
    return group.members[account]?.capabilities ?? group.defaultCapabilities;
  }

  async setCapabilities(groupId: string, account: string, capabilities: number): Promise<void> {
    await this.submit(groupId, SETTINGS_OPS.memberCapabilities, { account, capabilities });
  }

  async setDefaultCapabilities(groupId: string, defaultCapabilities: number): Promise<void> {
    await this.submit(groupId, SETTINGS_OPS.defaultCapabilities, { defaultCapabilities });
  }

  async setSubgroupVisibility(groupId: string, subgroupVisibility: Visibility): Promise<void> {
    await this.submit(groupId, SETTINGS_OPS.visibility, { subgroupVisibility });
  }

  /** The metadata record of a group, a member or a registered context; null when none is set. */
  metadata(groupId: string, target: MetadataTarget): MetadataRecord | null {
    const { ns, group } = this.readable(groupId);
    switch (target.target) {
      case 'group':
        return group.metadata;
      case 'member':
        if (effectiveCapabilities(ns, group, target.account) === undefined) {
          throw notFound(`account ${target.account} is not a member of group '${groupId}'`);
        }
        return group.members[target.account]?.metadata ?? null;
      case 'context': {
        const entry = group.contexts[target.contextId];
        if (!entry) throw notFound(`context '${target.contextId}' is not registered in group '${groupId}'`);
        return entry.metadata;
      }
    }
  }

  async setMetadata(groupId: string, target: MetadataTarget, value: { name?: string; data?: Record<string, string> }): Promise<void> {
    const body: Record<string, unknown> = { ...target, data: value.data ?? {} };
    if (value.name !== undefined) body.name = value.name;
    await this.submit(groupId, SETTINGS_OPS.metadata, body);
  }

  /**
   * The namespace's TEE admission policy. The policy lives on the namespace root; asked on a
   * subgroup, this answers the policy of the namespace the subgroup belongs to.
   */
  admissionPolicy(groupId: string): TeeAdmissionPolicyView {
    const { ns } = this.readable(groupId);
    const p = (ns.groups[ns.id]?.teeAdmissionPolicy as TeeAdmissionPolicy | undefined) ?? NO_POLICY;
    // the reference fixture's field order; `signedRelease` only in that form
    return {
      enabled: p !== NO_POLICY,
      allowedMrtd: p.allowedMrtd,
      allowedRtmr0: p.allowedRtmr0,
      allowedRtmr1: p.allowedRtmr1,
      allowedRtmr2: p.allowedRtmr2,
      allowedRtmr3: p.allowedRtmr3,
      allowedTcbStatuses: p.allowedTcbStatuses,
      acceptMock: p.acceptMock,
      ...(p.signedRelease ? { signedRelease: p.signedRelease } : {}),
      mode: p.mode,
    };
  }

  /**
   * Sets the namespace's TEE admission policy (root-guarded with the acting admin's own root: a
   * node holding it signs itself). Checks run here first so a refusal names its cause before any
   * proof is minted; the applier checks everything again.
   */
  async setAdmissionPolicy(groupId: string, body: Record<string, unknown>, rootProof?: string): Promise<void> {
    const { ns, group } = groupInScope(this.d.governance, groupId, this.d.identity.accountId);
    const root = policyRoot(ns, group, 'admission');
    const account = this.d.identity.accountId;
    requireAdmin(root, account);
    const policy = validateAdmissionPolicy(body);
    const { kind, digest } = admissionOp(policy);
    const proof = rootGuard({ ns, group: root, kind, opDigest: digest, account, rootProof, identity: this.d.identity });
    await this.d.governance.submit(ns.id, root.id, TEE_OPS.admission, { policy: { ...policy }, rootProof: proof });
  }

  /** Sets (or, with an empty list, disables) the namespace's TEE authoring policy; root-guarded. */
  async setAuthoringPolicy(groupId: string, allowedMrtd: unknown, rootProof?: string): Promise<void> {
    const { ns, group } = groupInScope(this.d.governance, groupId, this.d.identity.accountId);
    const root = policyRoot(ns, group, 'authoring');
    const account = this.d.identity.accountId;
    requireAdmin(root, account);
    const policy = validateAuthoringPolicy(allowedMrtd);
    const { kind, digest } = authoringOp(policy.allowedMrtd);
    const proof = rootGuard({ ns, group: root, kind, opDigest: digest, account, rootProof, identity: this.d.identity });
    await this.d.governance.submit(ns.id, root.id, TEE_OPS.authoring, { allowedMrtd: policy.allowedMrtd, rootProof: proof });
  }
}
