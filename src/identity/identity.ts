/**
 * The node's identity (admin spec "NodeIdentity"; domain.md §3.1): the account root key and the
 * account id derived from it, this node's device id, its signing key (the node key of the home)
 * and its X25519 agreement key. Minted once, on the first start, and kept in the store.
 */
import { randomBytes, type KeyObject } from 'node:crypto';
import { encodeCredential } from './pairing.ts';
import { accountIdOf, deviceIdOf, domainHash, toHex } from '../crypto/ids.ts';
import { ed25519Sign, generateKeyPair, privateKeyObject, publicKeyOf, type KeyPair } from '../crypto/keys.ts';
import type { Store } from '../store/store.ts';
import { openSealed } from '../crypto/seal.ts';
import { ed25519SeedOfPkcs8 } from '../crypto/x25519.ts';
import type { NodeIdentityView } from '../wire/accounts.ts';
import type { SealedEnvelope } from '../wire/ownership.ts';

interface StoredIdentity {
  root: KeyPair;
  accountId: string;
  deviceId: string;
  agreement: KeyPair;
  accountNamespaceId: string;
  createdAt: number;
}

export class NodeIdentity {
  /** the node signing identity: author of governance ops and the node's context identity */
  readonly publicKey: string;
  /**
   * This node's device credential (identity/credentials.ts): binds its signing key to its account,
   * signed by the account root; governance ops carry it where a namespace does not know the key yet.
   */
  readonly credential: string;

  private constructor(
    private readonly stored: StoredIdentity,
    private readonly signingKey: KeyObject,
    private readonly rootKey: KeyObject,
  ) {
    this.publicKey = publicKeyOf(signingKey);
    this.credential = encodeCredential(
      { rootPublicKey: stored.root.publicKey, deviceId: stored.deviceId, signPublicKey: this.publicKey, kemPublicKey: stored.agreement.publicKey, deviceEpoch: 0 },
      (m) => ed25519Sign(rootKey, m),
    );
  }

  /** Loads the identity, minting it on the first start; `signingKey` is the home's node key. */
  static async load(store: Store, signingKey: KeyObject, nowMs: number): Promise<NodeIdentity> {
    const space = store.space<StoredIdentity>('identity');
    let stored = await space.get('node');
    if (!stored) {
      const root = generateKeyPair('ed25519');
      const accountId = accountIdOf(Buffer.from(root.publicKey, 'hex'));
      stored = {
        root,
        accountId,
        deviceId: deviceIdOf(accountId, randomBytes(16)),
        agreement: generateKeyPair('x25519'),
        accountNamespaceId: toHex(domainHash('hearth.account.namespace.v1', [Buffer.from(accountId, 'hex')])),
        createdAt: nowMs,
      };
      await space.put('node', stored);
    }
    return new NodeIdentity(stored, signingKey, privateKeyObject(stored.root.privateKey));
  }

  get accountId(): string {
    return this.stored.accountId;
  }

  get deviceId(): string {
    return this.stored.deviceId;
  }

  get rootPublicKey(): string {
    return this.stored.root.publicKey;
  }

  get accountNamespaceId(): string {
    return this.stored.accountNamespaceId;
  }

  sign(message: Uint8Array): string {
    return ed25519Sign(this.signingKey, message);
  }

  signWithRoot(message: Uint8Array): string {
    return ed25519Sign(this.rootKey, message);
  }

  /**
   * Opens an envelope sealed to this node's account root (the runtime's `open_sealed`); the root
   * seed never leaves this object. Throws when the envelope does not open with this root.
   */
  openSealedToRoot(envelope: SealedEnvelope): Buffer {
    return openSealed(ed25519SeedOfPkcs8(this.stored.root.privateKey), this.stored.accountId, envelope);
  }

  view(): NodeIdentityView {
    return {
      accountId: this.stored.accountId,
      deviceId: this.stored.deviceId,
      publicKey: this.publicKey,
      accountRootPublicKey: this.stored.root.publicKey,
      holdsAccountRoot: true,
      deviceCertified: true,
      deviceAgreementKey: this.stored.agreement.publicKey,
      accountNamespaceId: this.stored.accountNamespaceId,
    };
  }
}
