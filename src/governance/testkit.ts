/**
 * Governance nodes for tests: each with its own identity, MemoryStore, log and services, so tests
 * can move ops between them (by hand or over a MemoryHub) and compare the states they fold.
 */
import { generateKeyPairSync } from 'node:crypto';
import { NodeIdentity } from '../accounts/identity.ts';
import type { Clock } from '../clock.ts';
import { EventBus } from '../events/bus.ts';
import { MemoryStore } from '../store/memory.ts';
import { canonicalJson } from './canonical.ts';
import { GroupService } from './groups/service.ts';
import { MembersService } from './groups/members-service.ts';
import { InvitationService } from './invitations/service.ts';
import { Governance } from './log.ts';
import { NamespaceService } from './namespaces/service.ts';
import { NamespaceManageService } from './namespaces/manage-service.ts';
import { createAppliers } from './ops.ts';
import { SettingsService } from './settings/service.ts';

export const TEST_APP = 'ab'.repeat(32);

/** A clock each test node advances on its own: every read is 1 ms later than the last. */
export function tickingClock(startMs: number): Clock & { set(ms: number): void } {
  let now = startMs;
  return { now: () => now++, set: (ms: number) => void (now = ms) };
}

export interface GovNode {
  store: MemoryStore;
  identity: NodeIdentity;
  bus: EventBus;
  clock: ReturnType<typeof tickingClock>;
  governance: Governance;
  namespaces: NamespaceService;
  manage: NamespaceManageService;
  groups: GroupService;
  members: MembersService;
  settings: SettingsService;
  invitations: InvitationService;
  /** a new Governance and services over the same store (a restart) */
  restart(): Promise<GovNode>;
}

export async function govNode(startMs = 1_700_000_000_000, existing?: Pick<GovNode, 'store' | 'identity' | 'clock'>): Promise<GovNode> {
  const store = existing?.store ?? new MemoryStore();
  const clock = existing?.clock ?? tickingClock(startMs);
  const identity = existing?.identity ?? (await NodeIdentity.load(store, generateKeyPairSync('ed25519').privateKey, clock.now()));
  const bus = new EventBus();
  const governance = new Governance({ store, identity, clock, bus, appliers: createAppliers() });
  await governance.load();
  const namespaces = new NamespaceService({ governance, identity, clock });
  const groups = new GroupService({ governance, identity, namespaces });
  const node: GovNode = {
    store,
    identity,
    bus,
    clock,
    governance,
    namespaces,
    groups,
    manage: new NamespaceManageService({ governance, namespaces, groups, identity, clock }),
    members: new MembersService({ governance, identity }),
    settings: new SettingsService({ governance, identity }),
    invitations: new InvitationService({ governance, identity, clock, store }),
    restart: () => govNode(startMs, { store, identity, clock }),
  };
  return node;
}

/** Copies every op `from` holds of a namespace into `to` (what a full pull does). */
export async function pull(from: GovNode, to: GovNode, namespaceId: string) {
  return to.governance.ingest(namespaceId, await from.governance.lacking(namespaceId, to.governance.heads(namespaceId)), { allowGenesis: true });
}

/** The namespace state as comparable text. */
export const stateText = (n: GovNode, namespaceId: string): string => canonicalJson(n.governance.stateOf(namespaceId));
