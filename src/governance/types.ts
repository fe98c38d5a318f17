/**
 * The governance model (admin spec "Namespace", "GroupInfo", "MetadataRecord", "Capabilities and
 * roles"; domain.md §4): each namespace's state is derived from an ordered log of signed ops. These
 * are the op envelope and the derived state every route reads.
 */
import { CAPABILITIES } from '../wire/capabilities.ts';

/**
 * State other domains keep in a group or namespace, applied by their own ops (registered with the
 * op registry from the composition root: src/node/ops.ts). Governance knows none of them: each
 * domain declares its fields by augmenting these interfaces from its own module
 * (`declare module '../governance/types.ts'`), so the stored state keeps one flat shape.
 */
export interface GroupExtensions {}
export interface NamespaceExtensions {}

export const ROLES = ['Admin', 'Member', 'ReadOnly', 'ReadOnlyTee', 'RelayTee'] as const;
export type Role = (typeof ROLES)[number];

/** Capability bits (admin-wire-b §6.1; domain.md §4.3): the wire's table (src/wire/capabilities.ts). */
export const CAP = CAPABILITIES;
export const ALL_CAPS = Object.values(CAP).reduce((a, b) => a | b, 0);

/** admin spec "MetadataRecord" */
export interface MetadataRecord {
  name: string | null;
  data: Record<string, string>;
  /** wall-clock milliseconds */
  updatedAt: number;
  /** the account that set it */
  updatedBy: string;
}

export interface MemberState {
  role: Role;
  /** per-member override of the group's default capabilities */
  capabilities?: number;
  autoFollow: { contexts: boolean; subgroups: boolean };
  metadata: MetadataRecord | null;
  /** Unix milliseconds */
  joinedAt: number;
  name?: string;
}

export interface ContextEntry {
  name?: string;
  metadata: MetadataRecord | null;
  registeredAt: number;
  /**
   * the bundle blob id of the version the context was created with (its registration carries it, as
   * the reference's `ContextRegistered{blob_id}`): what a joiner lacking the application fetches
   * from members while the group's `appKey` is unresolved (src/contexts/app-fetch.ts)
   */
  bundleBlobId?: string;
}

export interface GroupState extends GroupExtensions {
  id: string;
  namespaceId: string;
  parentId: string | null;
  name?: string;
  owner: string;
  /** the namespace admin set by the root-guarded AdminChanged op (root group only; absent = never changed) */
  admin?: string;
  /** invitation hash (SHA-256 of its borsh body, hex) → accounts that joined with it (single use per account) */
  consumedInvitations?: Record<string, string[]>;
  /** invitation id → who revoked it and when (`invitation.revoked`; invitations/admission.ts) */
  revokedInvitations?: Record<string, { by: string; at: number }>;
  /**
   * account → the namespace's removal count (`NamespaceState.removalEpoch`) its removal by an admin
   * reached: only an invitation minted at that count or later readmits it (invitations/admission.ts)
   */
  removedMembers?: Record<string, number>;
  /** u64 as a decimal string: owner ops advance it by one */
  ownerOpCounter: string;
  members: Record<string, MemberState>;
  defaultCapabilities: number;
  subgroupVisibility: 'open' | 'restricted';
  metadata: MetadataRecord | null;
  contexts: Record<string, ContextEntry>;
  targetApplicationId: string;
  appKey: string;
  teeAdmissionPolicy?: Record<string, unknown>;
  /** id (SHA-256) of the key new context deltas of this group are sealed with (src/sync/keys.ts); absent until one is made */
  keyId?: string;
  teeAuthoringPolicy?: Record<string, unknown>;
  /** Unix seconds */
  createdAt: number;
}

export interface NamespaceState extends NamespaceExtensions {
  id: string;
  name?: string;
  founding: { founderAccountId: string; salt: string };
  targetApplicationId: string;
  appKey: string;
  /** Unix seconds */
  createdAt: number;
  groups: Record<string, GroupState>;
  /** the highest op seq in the log (u64 decimal; dag.ts) */
  seq: string;
  /** the log's DAG heads: the parents of the next op authored here */
  heads: string[];
  /** highest nonce applied per signer (u64 decimal) */
  nonces: Record<string, string>;
  /** the account namespace is hidden from listings */
  hidden?: boolean;
  /**
   * Devices of accounts bound in this namespace beyond each account's own node (account → device →
   * binding); written by the account device ops (accounts/device-ops.ts). Absent on older state.
   */
  deviceBindings?: Record<string, Record<string, DeviceBinding>>;
  /**
   * Account → Ed25519 root public key (hex), recorded from bytes that prove it (proofs/roots.ts);
   * read by the seal route. Absent on older state.
   */
  accountRoots?: Record<string, string>;
  /**
   * Node signing key → the account and device it speaks for, recorded from the device credentials
   * ops carry (signers.ts). Never pruned. Absent on older state.
   */
  signers?: Record<string, { account: string; deviceId: string }>;
  /** how many admin removals the log holds, in fold order (invitations/admission.ts); absent = 0 */
  removalEpoch?: number;
  /** set by the namespace.deleted op (unix ms): the log stays as a tombstone, every later op is refused */
  deletedAt?: number;
  /**
   * Account → the highest root key epoch a verified root proof was signed at (root-guard.ts): a
   * proof signed at a lower epoch (a rotated-out key) is refused. Absent = 0.
   */
  accountRootEpochs?: Record<string, number>;
}

/** A device's binding in a namespace: it may write for its account here until revoked or descoped. */
export interface DeviceBinding {
  signingKey: string;
  /** Unix milliseconds */
  linkedAt: number;
  /** set when the account revoked the device (forward-only: its earlier ops stay valid) */
  revokedAt?: number;
}

/**
 * A signed governance op. `id` = SHA-256 over the canonical unsigned envelope; the signature covers
 * it. `parents` are the log heads its author had applied and `seq` is one above the highest parent's
 * (dag.ts), so ops from several nodes form a DAG folded in (seq, id) order.
 */
export interface GovOp {
  id: string;
  namespaceId: string;
  groupId: string;
  seq: string;
  parents: string[];
  /** the signing device's Ed25519 public key, hex */
  signer: string;
  /** the account the op is authored as */
  account: string;
  nonce: string;
  kind: string;
  body: Record<string, unknown>;
  timestampMs: number;
  /** the signer's device credential (hex), carried while the namespace does not bind the signer yet (signers.ts) */
  credential?: string;
  signature: string;
}

export type UnsignedOp = Omit<GovOp, 'id' | 'signature'>;
