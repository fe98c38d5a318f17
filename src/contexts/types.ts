/**
 * The contexts domain's stored shapes and constants (admin spec "Context"; admin-wire-a §4.1;
 * runtime.md §3, §5; domain.md "ContextMeta"). Ids, keys and hashes are 64 lowercase hex
 * (reference README "Id encodings").
 */
import type { GroupState, NamespaceState } from '../governance/index.ts';

/** The uninitialized state hash: 32 bytes of 0xff (README decision: the spec's "all-ones" hash). */
export const UNINITIALIZED_HASH = 'f'.repeat(64);

/** The parent of a context's genesis delta (runtime.md §3: parents `[[0;32]]`). */
export const GENESIS_PARENT = '0'.repeat(64);

/** admin-wire-a §4.3: `initializationParams` ≤ 1 MiB. */
export const MAX_INIT_PARAMS_BYTES = 1024 * 1024;

/** admin-wire-a §7: method names are 1–256 characters without control characters. */
export const MAX_METHOD_NAME = 256;

/** admin-wire-a §7: `argsJson` ≤ 10 MiB serialized. */
export const MAX_ARGS_BYTES = 10 * 1024 * 1024;

/** The namespace and group a context is registered in (src/contexts/service.ts `registration`). */
export interface Registration {
  ns: NamespaceState;
  group: GroupState;
}

/** What this node keeps about a context it has created or joined. */
export interface ContextMeta {
  id: string;
  applicationId: string;
  /** the group the context was created in or joined through (the governance registry is authoritative) */
  groupId: string;
  serviceName?: string;
  /**
   * the bundle blob id of the application version the context runs (releases.ts): pinned when the
   * context is created or joined, moved by a group upgrade; absent on contexts stored before pinning
   */
  bundleBlobId?: string;
  /** the guest's last committed root (`contextStateHash`); UNINITIALIZED_HASH before any state */
  rootHash: string;
  /** ids of the DAG's current heads (delta records) */
  dagHeads: string[];
  /** Unix milliseconds */
  createdAt: number;
}

/** One identity of a context: a member public key, and whether this node can sign for it. */
export interface ContextMember {
  publicKey: string;
  /** this node holds the key (its own signing key, or a stored secret) */
  owned: boolean;
  /** Unix milliseconds */
  addedAt: number;
}

/**
 * A state delta produced by one committing call (runtime.md §5): replication ships these later.
 * `id = SHA-256(parent ids' bytes in order ‖ artifact)` (docs/contexts.md "Delta records").
 */
export interface DeltaRecord {
  id: string;
  contextId: string;
  parents: string[];
  /** the guest's commit artifact, hex */
  artifact: string;
  /** the root hash after applying it */
  rootHash: string;
  /** the member key that executed the call (for a delegated call, the author's device key) */
  author: string;
  /** a delegated call: the warrant it ran under (hex borsh) and the relay key that executed it */
  delegation?: { warrant: string; executorKey: string };
  /** Unix milliseconds */
  timestampMs: number;
  /** hybrid logical clock stamp of its making (src/sync/hlc.ts); absent on records from before sync */
  hlc?: string;
  /** the application events the call emitted, replayed on the nodes that receive the delta (data hex) */
  events?: { kind: string; data: string; handler: string | null }[];
  /** the node that made it (its signing key); absent on records from before sync */
  origin?: string;
  /** the origin's Ed25519 signature over the delta's digest (src/sync/wire.ts `deltaDigest`) */
  signature?: string;
}
