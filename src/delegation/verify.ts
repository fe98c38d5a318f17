/**
 * What every delegated request and every delegated op checks first (reference `Delegated::verify`,
 * admin-wire-b §8): the warrant decodes, its author device signed it, and the author's
 * `AccountProof<DeviceCert>` ties that device key to the author account. Authenticity only —
 * standing, membership, nonces and expiry are the callers'. Every failure here is a 400
 * ("Malformed" in the reference), and all of it is pure, so appliers can run it.
 */
import { AccountProofError, decodeDeviceAccountProof, verifyDeviceAccountProof, type DeviceAccountProof } from '../identity/account-proof.ts';
import { badRequest, forbidden } from '../errors.ts';
import { hexField, warrantSignatureValid, type CreationWarrant, type GovernanceWarrant, type IntentWarrant } from './warrants.ts';

export interface Delegation<W> {
  warrant: W;
  proof: DeviceAccountProof;
}

type AnyWarrant = IntentWarrant | CreationWarrant | GovernanceWarrant;

export function authenticate<W extends AnyWarrant>(warrantHex: unknown, proofHex: unknown, decode: (bytes: Buffer) => W): Delegation<W> {
  if (typeof warrantHex !== 'string') throw badRequest('warrant must be a hex string');
  if (typeof proofHex !== 'string') throw badRequest('authorProof must be a hex string');
  const warrant = decode(hexField(warrantHex, 'warrant'));
  let proof: DeviceAccountProof;
  try {
    proof = decodeDeviceAccountProof(hexField(proofHex, 'authorProof'));
  } catch (err) {
    if (err instanceof AccountProofError) throw badRequest(`authorProof is not a valid credential: ${err.message}`);
    throw err;
  }
  if (!warrantSignatureValid(warrant)) throw badRequest('delegation does not verify: the warrant is not signed by the author device it names');
  try {
    verifyDeviceAccountProof(proof, warrant.authorAccount);
  } catch (err) {
    if (err instanceof AccountProofError) throw badRequest(`delegation does not verify: the author proof ${err.message}`);
    throw err;
  }
  if (proof.statement.signPk !== warrant.authorDeviceKey) throw badRequest('delegation does not verify: the author proof certifies another device key than the warrant names');
  return { warrant, proof };
}

/** The warrant names this executor — its account and the one device that may spend it (403). */
export function requireExecutor(w: AnyWarrant, account: string, key: string): void {
  if (w.executor !== account) throw forbidden(`this warrant names executor account ${w.executor}; this node is ${account}`);
  if (w.executorKey !== key) throw forbidden(`this warrant names executor key ${w.executorKey}; this node spends warrants with ${key}`);
}

/** Only the relay reads a clock (reference `perform_intent.rs`): peers never judge expiry. */
export function requireNotExpired(w: AnyWarrant, nowSecs: number): void {
  if (w.notAfter < BigInt(nowSecs)) throw forbidden(`this warrant expired at ${w.notAfter} and it is now ${nowSecs}; mint a fresh one`);
}

/** The author device is not revoked in the namespace (403). */
export function requireDeviceNotRevoked(bindings: Record<string, { signingKey: string; revokedAt?: number }> | undefined, w: AnyWarrant): void {
  for (const b of Object.values(bindings ?? {})) {
    if (b.signingKey === w.authorDeviceKey && b.revokedAt !== undefined) throw forbidden(`the author device ${w.authorDeviceKey} is revoked in this namespace`);
  }
}
