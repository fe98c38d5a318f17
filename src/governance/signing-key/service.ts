/**
 * Group signing keys (admin spec "Groups": `POST /groups/{groupId}/signing-key`,
 * RegisterGroupSigningKeyRequest → RegisterGroupSigningKeyResponseData; reference
 * `RegisterGroupSigningKeyApiRequest {signingKey}` → `{publicKey}`; availability on rc.83 "not
 * shown", so hearth serves it as the request and response describe). No HTTP here.
 *
 * The node imports the secret of a signing key that speaks for this node's account in the group's
 * namespace — its own signing key, or a device key bound to its account there (and not revoked) —
 * and keeps it node-local, keyed by group and public key, as the reference's group signing-key
 * store does. A key speaking for another account, or for no one, is refused (403): the node must
 * never hold a key it could sign for someone else with. The secret never leaves the store; it is
 * not logged and no route answers it.
 */
import type { NodeIdentity } from '../../identity/identity.ts';
import type { Clock } from '../../clock.ts';
import { keyFromSeed } from '../../crypto/seeded-keys.ts';
import { badRequest, forbidden } from '../../errors.ts';
import type { Space, Store } from '../../store/store.ts';
import { requireMember } from '../authority.ts';
import type { Governance } from '../log.ts';

export interface SigningKeyRecord {
  /** PKCS#8 DER, base64 */
  privateKey: string;
  /** Unix milliseconds */
  registeredAt: number;
}

export interface SigningKeyDeps {
  store: Store;
  governance: Governance;
  identity: NodeIdentity;
  clock: Clock;
}

/**
 * The 32-byte Ed25519 secret as 64 hex, or the 64-byte `secret ‖ public` form (128 hex) whose
 * second half must be the first's public key. The message never repeats the input.
 */
export function parseSigningSecret(text: unknown): { seed: Uint8Array; publicKey: string } {
  if (typeof text !== 'string' || text.trim() === '') throw badRequest('signingKey is required: the Ed25519 secret key as 64 hex characters');
  const t = text.trim();
  if (!/^(?:[0-9a-fA-F]{64}|[0-9a-fA-F]{128})$/.test(t)) throw badRequest('signingKey must be an Ed25519 secret key: 64 hex characters (or 128 with its public key)');
  const bytes = Buffer.from(t, 'hex');
  const seed = new Uint8Array(bytes.subarray(0, 32));
  const { publicKey } = keyFromSeed(seed);
  if (bytes.length === 64 && bytes.subarray(32).toString('hex') !== publicKey) throw badRequest('signingKey: its second half is not the public key of its first');
  return { seed, publicKey };
}

export class SigningKeyService {
  private readonly keys: Space<SigningKeyRecord>;

  constructor(private readonly d: SigningKeyDeps) {
    this.keys = d.store.space<SigningKeyRecord>('gov.signing-keys');
  }

  async register(groupId: string, signingKey: unknown): Promise<{ publicKey: string }> {
    const { seed, publicKey } = parseSigningSecret(signingKey);
    const { ns, group } = this.d.governance.requireGroup(groupId);
    const me = this.d.identity.accountId;
    requireMember(ns, group, me);
    const bound = Object.values(ns.deviceBindings?.[me] ?? {}).some((b) => b.signingKey === publicKey && b.revokedAt === undefined);
    if (publicKey !== this.d.identity.publicKey && !bound) {
      throw forbidden(`the key ${publicKey} is not a signing key of this node's account ${me} in namespace '${ns.id}' (its own key, or a device bound there and not revoked)`);
    }
    await this.keys.put(`${group.id}/${publicKey}`, { privateKey: keyFromSeed(seed).privateKey, registeredAt: this.d.clock.now() });
    return { publicKey };
  }

  /** The public keys registered for a group on this node. */
  async registered(groupId: string): Promise<string[]> {
    const out: string[] = [];
    for await (const [k] of this.keys.entries({ prefix: `${groupId}/` })) out.push(k.slice(groupId.length + 1));
    return out;
  }
}
