/**
 * Which signing key speaks for which account in a namespace (domain.md §3.1, §4.5: a member node
 * signs governance ops with its node signing key, and peers accept an op only from a key bound to
 * the op's account). A key is bound by a device credential (identity/credentials.ts) that an op
 * carries: the credential is signed by the account root and re-derives the account from it, so it
 * proves the binding from its bytes alone. Bindings are never forgotten when an account leaves
 * (its earlier ops must still verify when a lagging node replays them); a revoked device stops
 * speaking from the revocation on, in fold order.
 */
import { parseCredential } from '../identity/credentials.ts';
import { forbidden } from '../errors.ts';
import { recordAccountRoot } from './proofs/roots.ts';
import type { ApplierRegistry } from './appliers.ts';
import { isMember } from './authority.ts';
import type { GovOp, NamespaceState } from './types.ts';

export function speaksFor(ns: NamespaceState, signer: string, account: string): boolean {
  const bound = ns.signers?.[signer];
  if (bound?.account === account) return ns.deviceBindings?.[account]?.[bound.deviceId]?.revokedAt === undefined;
  const devices = ns.deviceBindings?.[account];
  return devices !== undefined && Object.values(devices).some((d) => d.signingKey === signer && d.revokedAt === undefined);
}

/**
 * Checks in a fold draft that the op's signer speaks for its account, recording the binding its
 * credential proves (throws 403 when neither holds).
 */
export function bindSigner(ns: NamespaceState, op: GovOp): void {
  if (op.credential !== undefined) {
    const cred = parseCredential(op.credential);
    if (cred.accountId !== op.account || cred.signingKey !== op.signer) {
      throw forbidden("the op's credential does not bind its signer to its account");
    }
    const known = ns.signers?.[op.signer];
    if (known && known.account !== op.account) throw forbidden(`signing key ${op.signer} already speaks for account ${known.account}`);
    (ns.signers ??= {})[op.signer] = { account: op.account, deviceId: cred.deviceId };
    recordAccountRoot(ns, cred.rootPublicKey);
  }
  if (!speaksFor(ns, op.signer, op.account)) throw forbidden(`signing key ${op.signer} does not speak for account ${op.account} in namespace '${ns.id}'`);
}

/** The account a signing key (a peer's node key) speaks for in a namespace, if any. */
export function accountOfKey(ns: NamespaceState, key: string): string | undefined {
  const bound = ns.signers?.[key];
  if (bound) return speaksFor(ns, key, bound.account) ? bound.account : undefined;
  for (const [account, devices] of Object.entries(ns.deviceBindings ?? {})) {
    if (Object.values(devices).some((d) => d.signingKey === key && d.revokedAt === undefined)) return account;
  }
  return undefined;
}

/** Whether a key was ever bound to an account in the namespace (its ops may still be legitimate). */
export function everBound(ns: NamespaceState, key: string): boolean {
  if (ns.signers?.[key]) return true;
  return Object.values(ns.deviceBindings ?? {}).some((devices) => Object.values(devices).some((d) => d.signingKey === key));
}

/** An op that only binds its signer's key (carried credential) for a member account. */
export const SIGNER_BOUND = 'node.key.bound';

export function registerSignerOps(registry: ApplierRegistry): void {
  registry.register(SIGNER_BOUND, ({ ns, op }) => {
    if (!Object.values(ns.groups).some((g) => isMember(ns, g, op.account))) throw forbidden(`account ${op.account} is not a member of namespace '${ns.id}'`);
  });
}
