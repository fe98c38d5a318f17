/**
 * Seal and ownership proofs (admin spec "Groups": seal, issue-ownership-proof,
 * issue-namespace-ownership-proof; admin-wire-b §4.19–§4.20). Both act as this node's account on a
 * group in the session's scope and write nothing. Knows nothing of HTTP.
 */
import type { NodeIdentity } from '../../identity/identity.ts';
import { encodeCredential } from '../../identity/pairing.ts';
import type { Clock } from '../../clock.ts';
import { badRequest, forbidden, notFound } from '../../errors.ts';
import { ancestry, isMember } from '../authority.ts';
import type { Governance } from '../log.ts';
import { groupInScope } from '../namespaces/scope.ts';
import type { GroupState, NamespaceState } from '../types.ts';
import { ownershipPayload, proofInvalid, signOwnership, validateClaim, type ProofClaim } from './ownership.ts';
import { accountRootOf } from './roots.ts';
import { SEAL_MAX_PLAINTEXT_BYTES, sealToRoot } from '../../crypto/seal.ts';
import type { OwnershipProof, SealedEnvelope } from '../../wire/ownership.ts';

export interface NamespaceOwnershipProof extends OwnershipProof {
  founding: { founderAccountId: string; salt: string };
  /** hex of this node's device credential (hearth layout, identity/credentials.ts) */
  credential: string;
}

/** The seal route's plaintext: non-empty, even-length hex, at most 64 KiB decoded (400 otherwise). */
export function parsePlaintext(hex: string): Buffer {
  if (hex.length === 0) throw badRequest('plaintext must not be empty');
  if (hex.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(hex)) throw badRequest('plaintext must be hex with an even number of digits');
  if (hex.length / 2 > SEAL_MAX_PLAINTEXT_BYTES) throw badRequest(`plaintext is ${hex.length / 2} bytes decoded; maximum is ${SEAL_MAX_PLAINTEXT_BYTES}`);
  return Buffer.from(hex, 'hex');
}

export class ProofsService {
  constructor(private readonly d: { governance: Governance; identity: NodeIdentity; clock: Clock }) {}

  private get me(): string {
    return this.d.identity.accountId;
  }

  /**
   * Seals `plaintext` to `account`'s current root. Unknown target, a target outside the group and
   * a target without a root key on record share one 404, so the answer does not reveal which.
   */
  seal(groupId: string, account: string, plaintext: Buffer): SealedEnvelope {
    const { ns, group } = groupInScope(this.d.governance, groupId, this.me);
    if (!isMember(ns, group, this.me)) throw forbidden('not a member of group');
    const root = isMember(ns, group, account) ? accountRootOf(ns, account, { accountId: this.me, rootPublicKey: this.d.identity.rootPublicKey }) : undefined;
    const unknown = () => notFound(`group ${groupId} knows no account ${account} with a root key on record`);
    if (!root) throw unknown();
    try {
      return sealToRoot({ accountId: account, rootPublicKey: root.rootPublicKey, rootEpoch: root.epoch }, plaintext);
    } catch {
      throw unknown(); // a recorded key that is not a usable point cannot be sealed to
    }
  }

  /** A claim about a context that lives in `groupId` or below it. */
  issueOwnershipProof(groupId: string, contextId: string, claim: ProofClaim): OwnershipProof {
    validateClaim(claim);
    const { group } = this.directAdminGroup(groupId);
    const home = this.contextHome(contextId);
    if (!home) throw notFound(`context '${contextId}' not found`);
    if (!ancestry(home.ns, home.group).some((g) => g.id === group.id)) {
      throw proofInvalid(`context ${contextId} is not within the namespace rooted at ${groupId}`);
    }
    return this.sign(groupId, contextId, claim);
  }

  /** A claim about the whole namespace: `groupId` must be its root. */
  issueNamespaceOwnershipProof(groupId: string, claim: ProofClaim): NamespaceOwnershipProof {
    validateClaim(claim);
    const { ns, group } = this.directAdminGroup(groupId);
    if (group.parentId !== null) throw proofInvalid('group_id must reference a namespace root group');
    const proof = this.sign(groupId, '', claim);
    return { ...proof, founding: { ...ns.founding }, credential: this.ownCredential() };
  }

  /** The group, when this node's account holds a direct Admin row there (403 NotAGroupAdmin). */
  private directAdminGroup(groupId: string): { ns: NamespaceState; group: GroupState } {
    const found = groupInScope(this.d.governance, groupId, this.me);
    if (found.group.members[this.me]?.role !== 'Admin') {
      throw forbidden(`account ${this.me} is not a direct admin of group '${groupId}' (NotAGroupAdmin)`);
    }
    return found;
  }

  /** The group a context is registered in, in any namespace this node stores. */
  private contextHome(contextId: string): { ns: NamespaceState; group: GroupState } | undefined {
    for (const ns of this.d.governance.namespaces()) {
      const group = Object.values(ns.groups).find((g) => g.contexts[contextId] !== undefined);
      if (group) return { ns, group };
    }
    return undefined;
  }

  private sign(groupId: string, contextId: string, claim: ProofClaim): OwnershipProof {
    const issuer = this.d.identity.publicKey;
    const payload = ownershipPayload({ claim, groupId, issuer, contextId, nowMs: this.d.clock.now() });
    return signOwnership(payload, issuer, (m) => this.d.identity.sign(m));
  }

  /** This node's device credential, certified by the account root it holds (deterministic: Ed25519). */
  private ownCredential(): string {
    const id = this.d.identity;
    return encodeCredential(
      { rootPublicKey: id.rootPublicKey, deviceId: id.deviceId, signPublicKey: id.publicKey, kemPublicKey: id.view().deviceAgreementKey ?? '0'.repeat(64), deviceEpoch: 0 },
      (m) => id.signWithRoot(m),
    );
  }
}
