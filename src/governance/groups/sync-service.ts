/**
 * What `POST /admin-api/groups/{groupId}/sync` does (admin spec "Sync, upgrades and migration";
 * admin-wire-b §7.1), without HTTP: settle a pending join of the group first, then pull the group's
 * namespace log from the connected peers that hold it, within a deadline, and read the group back.
 *
 * "Join, then sync" is the spec's client flow (Contexts rule 5), and a client calls sync the moment
 * the join answers. A join answered while no member peer was reachable is pending (service.ts); a
 * heartbeat or a new connection may be retrying it at that very moment. The sync waits for that
 * attempt (or makes one) instead of reading before it stored anything (docs/governance.md
 * "Acknowledged joins"); only when no member node answered is the group still unknown, and the 404
 * says so.
 */
import { notFound } from '../../errors.ts';
import type { InvitationService } from '../invitations/service.ts';
import type { Governance } from '../log.ts';
import type { GroupState, NamespaceState } from '../types.ts';
import type { GroupService } from './service.ts';

/** What the sync needs of replication (governance/replication/replicator.ts). */
export interface GroupSync {
  syncNamespace(namespaceId: string): Promise<{ peers: number; answered: number }>;
}

export interface GroupSyncDeps {
  governance: Governance;
  groups: GroupService;
  invitations: InvitationService;
  /** governance replication; absent on a node without a network */
  sync?: GroupSync;
}

export async function syncGroup(d: GroupSyncDeps, groupId: string): Promise<{ ns: NamespaceState; group: GroupState }> {
  if (!d.governance.locate(groupId) && (await d.invitations.pendingJoin(groupId)) && !(await d.invitations.completePending(groupId))) {
    throw notFound(`group '${groupId}' not found: its join is pending until a member node answers`);
  }
  const before = d.groups.get(groupId);
  await d.sync?.syncNamespace(before.ns.id);
  return d.groups.get(groupId);
}
