/**
 * Op appliers of the settings family (admin spec "Capabilities, settings and metadata";
 * admin-wire-b §6; authorization per §11): member capabilities, default capabilities, subgroup
 * visibility and group/member/context metadata. Each checks the author's authority against the
 * current state and validates its values, so an op from a peer is held to the same rules.
 */
import { badRequest, conflict, notFound } from '../../errors.ts';
import type { ApplierRegistry } from '../appliers.ts';
import { effectiveCapabilities, groupOf, requireAdmin, requireCapability } from '../authority.ts';
import type { GroupState, MetadataRecord, NamespaceState } from '../types.ts';
import { registerTeeOps } from './tee-ops.ts';
import { requireMask, requireVisibility, validateMetadata } from './validate.ts';

export const SETTINGS_OPS = {
  memberCapabilities: 'member.capabilities.set',
  defaultCapabilities: 'group.default-capabilities.set',
  visibility: 'group.subgroup-visibility.set',
  metadata: 'metadata.set',
} as const;

export interface MemberCapabilitiesBody {
  account: string;
  capabilities: number;
}

export type MetadataTarget = { target: 'group' } | { target: 'member'; account: string } | { target: 'context'; contextId: string };
export type MetadataBody = MetadataTarget & { name?: string; data: Record<string, string> };

/** A direct member row, else 404 (not a member) or 409 (membership only inherited: no row to change). */
export function directRow(ns: NamespaceState, group: GroupState, account: string) {
  const row = group.members[account];
  if (row) return row;
  if (effectiveCapabilities(ns, group, account) !== undefined) {
    throw conflict(`account ${account} is an inherited member of group '${group.id}', not a direct one`);
  }
  throw notFound(`account ${account} is not a member of group '${group.id}'`);
}

/** The record a metadata write produces: `data` replaces, an absent `name` keeps the stored one. */
function nextRecord(prev: MetadataRecord | null, name: string | undefined, data: Record<string, string>, at: number, by: string): MetadataRecord {
  return { name: name ?? prev?.name ?? null, data, updatedAt: at, updatedBy: by };
}

export function registerSettingsOps(registry: ApplierRegistry): void {
  registerTeeOps(registry);

  registry.register(SETTINGS_OPS.memberCapabilities, ({ ns, op }) => {
    const body = op.body as unknown as MemberCapabilitiesBody;
    const group = groupOf(ns, op.groupId);
    requireAdmin(group, op.account);
    const capabilities = requireMask(body.capabilities, 'capabilities');
    directRow(ns, group, body.account).capabilities = capabilities;
  });

  registry.register(SETTINGS_OPS.defaultCapabilities, ({ ns, op }) => {
    const group = groupOf(ns, op.groupId);
    requireAdmin(group, op.account);
    group.defaultCapabilities = requireMask(op.body.defaultCapabilities, 'defaultCapabilities');
  });

  registry.register(SETTINGS_OPS.visibility, ({ ns, op }) => {
    const group = groupOf(ns, op.groupId);
    requireCapability(ns, group, op.account, 'CAN_MANAGE_VISIBILITY');
    group.subgroupVisibility = requireVisibility(op.body.subgroupVisibility);
  });

  registry.register(SETTINGS_OPS.metadata, ({ ns, op }) => {
    const body = op.body as unknown as MetadataBody;
    const group = groupOf(ns, op.groupId);
    const { name, data } = validateMetadata(body.name, body.data);
    const stamp = (prev: MetadataRecord | null) => nextRecord(prev, name, data, op.timestampMs, op.account);
    switch (body.target) {
      case 'group':
        requireCapability(ns, group, op.account, 'CAN_MANAGE_METADATA');
        group.metadata = stamp(group.metadata);
        return;
      case 'member': {
        // a member may always set its own member metadata (admin-wire-b §6.6)
        if (body.account !== op.account || !group.members[body.account]) requireCapability(ns, group, op.account, 'CAN_MANAGE_METADATA');
        const row = directRow(ns, group, body.account);
        row.metadata = stamp(row.metadata);
        return;
      }
      case 'context': {
        requireCapability(ns, group, op.account, 'CAN_MANAGE_METADATA');
        const entry = group.contexts[body.contextId];
        if (!entry) throw notFound(`context '${body.contextId}' is not registered in group '${group.id}'`);
        entry.metadata = stamp(entry.metadata);
        return;
      }
      default:
        throw badRequest('unknown metadata target');
    }
  });
}
