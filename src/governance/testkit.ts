/**
 * Governance for tests. Applying ops as a replaying node does, straight through the applier
 * registry onto a copy of the state (`applyOp`, `refusalOf`); and whole governance nodes, each with
 * its own identity, MemoryStore, log and services, so tests can move ops between them (by hand or
 * over a MemoryHub) and compare the states they fold (`govNode`, `pull`, `stateText`).
 */
import { generateKeyPairSync } from 'node:crypto';
import { ed25519Sign, generateKeyPair, privateKeyObject } from '../crypto/keys.ts';
import { NodeIdentity } from '../identity/identity.ts';
import type { Clock } from '../clock.ts';
import { EventBus } from '../bus.ts';
import { MemoryStore } from '../store/memory.ts';
import { canonicalJson } from './canonical.ts';
import { GroupService } from './groups/service.ts';
import { MembersService } from './groups/members-service.ts';
import { InvitationService } from './invitations/service.ts';
import { Governance, opIdOf, type VerifyReport } from './log.ts';
import { NamespaceService } from './namespaces/service.ts';
import { NamespaceManageService } from './namespaces/manage-service.ts';
import type { OpRegistration } from './appliers.ts';
import { createAppliers } from './ops.ts';
import { HearthError } from '../errors.ts';
import type { GovOp, NamespaceState } from './types.ts';
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
  /** what loading the stored log dropped or re-derived (issue #23 section 6) */
  verified: VerifyReport;
  /** a new Governance and services over the same store (a restart) */
  restart(): Promise<GovNode>;
}

export async function govNode(startMs = 1_700_000_000_000, existing?: Pick<GovNode, 'store' | 'identity' | 'clock'>): Promise<GovNode> {
  const store = existing?.store ?? new MemoryStore();
  const clock = existing?.clock ?? tickingClock(startMs);
  const identity = existing?.identity ?? (await NodeIdentity.load(store, generateKeyPairSync('ed25519').privateKey, clock.now()));
  const bus = new EventBus();
  const governance = new Governance({ store, identity, clock, bus, appliers: createAppliers() });
  const verified = await governance.load();
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
    verified,
    restart: () => govNode(startMs, { store, identity, clock }),
  };
  return node;
}

/** Copies every op `from` holds of a namespace into `to` (what a full pull does). */
export async function pull(from: GovNode, to: GovNode, namespaceId: string) {
  return to.governance.ingest(namespaceId, await from.governance.lacking(namespaceId, to.governance.heads(namespaceId)), { allowGenesis: true });
}

/** A founds a namespace, B joins it with an invitation; both hold the same log. */
export async function pair(): Promise<{ a: GovNode; b: GovNode; nsId: string }> {
  const a = await govNode(1_700_000_000_000);
  const b = await govNode(1_700_000_000_500);
  const ns = await a.namespaces.found({ applicationId: TEST_APP, name: 'team' });
  const { invitation } = await a.invitations.invite(ns.id, {});
  await pull(a, b, ns.id);
  const joined = await b.invitations.join(JSON.parse(JSON.stringify(invitation)), ns.id);
  if (joined.pending) throw new Error('the join answered pending although B holds the log');
  await pull(b, a, ns.id);
  return { a, b, nsId: ns.id };
}

/** The namespace state as comparable text. */
export const stateText = (n: GovNode, namespaceId: string): string => canonicalJson(n.governance.stateOf(namespaceId));

/**
 * `applyOp` over governance's op kinds and the `extensions` a domain built on governance adds (its
 * own ops, as the composition root adds them: src/node/ops.ts).
 */
export function opApplier(...extensions: OpRegistration[]) {
  const registry = createAppliers(...extensions);
  return (ns: NamespaceState, groupId: string, kind: string, body: Record<string, unknown>, op: Partial<GovOp> = {}): NamespaceState => {
    const draft = structuredClone(ns);
    const envelope: GovOp = { namespaceId: ns.id, groupId, kind, body, account: '', signer: '', timestampMs: 7_000, seq: '1', parents: [], nonce: '1', id: 'f'.repeat(64), signature: '', ...op };
    registry.get(kind)({ ns: draft, op: envelope, emit: () => undefined });
    return draft;
  };
}

/** The state after `kind` applies; `op` overrides the envelope (author account, signer, id, time). */
export const applyOp = opApplier();

/** `ok`, or `<kind>: <message>` of the HearthError the call threw (anything else is rethrown). */
export function refusalOf(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    if (e instanceof HearthError) return `${e.kind}: ${e.message}`;
    throw e;
  }
  return 'ok';
}

/**
 * An op that claims `account` but is signed by a stranger's key no credential binds to it, placed
 * right after the namespace's current heads: well formed, correctly signed, and not authorized.
 */
export function forgedOp(governance: Governance, nsId: string, account: string, kind: string, body: Record<string, unknown>): GovOp {
  const stranger = generateKeyPair('ed25519');
  const unsigned = {
    namespaceId: nsId,
    groupId: nsId,
    seq: (BigInt(governance.stateOf(nsId)!.seq) + 1n).toString(),
    parents: governance.heads(nsId),
    signer: stranger.publicKey,
    account,
    nonce: '1',
    kind,
    body,
    timestampMs: 1,
  };
  const id = opIdOf(unsigned);
  return { ...unsigned, id, signature: ed25519Sign(privateKeyObject(stranger.privateKey), Buffer.from(id, 'hex')) } as GovOp;
}
