/**
 * Which accounts' root keys a namespace has on record (admin-wire-b §4.19: seal "to the target
 * account's current root key"). A root key enters the record only from bytes that prove it: the
 * founder's key at genesis, a device credential (admission, device link) or a verified root proof
 * (owner ops, TEE policies). Each proves itself because the account id derives from the root key
 * (admin-wire-b §1.7). Hearth accounts never rotate, so every recorded root is epoch 0.
 */
import { accountIdOf } from '../../crypto/ids.ts';
import type { SignedOwnerOp } from '../root-guard.ts';
import type { NamespaceState } from '../types.ts';

export interface AccountRoot {
  rootPublicKey: string;
  epoch: number;
}

/**
 * Records a root key (64 hex) in an applier's draft. The account is derived from the key, so a
 * caller cannot file a key under another account.
 */
export function recordAccountRoot(ns: NamespaceState, rootPublicKey: string): void {
  const key = rootPublicKey.toLowerCase();
  if (!/^[0-9a-f]{64}$/.test(key)) return;
  const account = accountIdOf(Buffer.from(key, 'hex'));
  ns.accountRoots ??= {};
  ns.accountRoots[account] = key;
}

/**
 * Records what a verified root proof proves (an applier's draft): the account's genesis root key,
 * and the epoch it signed at when that is above the one on record, so a rotated-out key cannot
 * sign again (root-guard.ts `verifyRootProof`).
 */
export function recordRootProof(ns: NamespaceState, proof: SignedOwnerOp): void {
  recordAccountRoot(ns, proof.rootKey);
  const epoch = proof.auth.keyEpoch;
  if (epoch > (ns.accountRootEpochs?.[proof.auth.account] ?? 0)) {
    ns.accountRootEpochs ??= {};
    ns.accountRootEpochs[proof.auth.account] = epoch;
  }
}

/**
 * The root key of an account as this namespace knows it; `self` is this node's own account and
 * root, known even for state recorded before roots were kept.
 */
export function accountRootOf(ns: NamespaceState, account: string, self: { accountId: string; rootPublicKey: string }): AccountRoot | undefined {
  const recorded = ns.accountRoots?.[account];
  if (recorded) return { rootPublicKey: recorded, epoch: 0 };
  if (account === self.accountId) return { rootPublicKey: self.rootPublicKey, epoch: 0 };
  return undefined;
}
