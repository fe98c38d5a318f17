/**
 * Sealing for the `seal_to` / `open_sealed` host functions (core
 * `crates/runtime/src/logic/host_functions/sealing.rs`, envelope layout from core `crates/crypto`
 * `SealedEnvelope::to_bytes`): a guest seals bytes to an account's Ed25519 root key and stores the
 * envelope; only the holder of that root opens it again.
 *
 * The envelope an app sees is the reference's byte layout: ephemeral public key (32) ‖ nonce (12) ‖
 * AES-256-GCM ciphertext with its 16-byte tag. The key schedule inside is hearth's one
 * (`crypto/seal.ts`, reused here, not copied), bound to the account derived from the
 * recipient key and root epoch 0, so an envelope written by a merod node does not open on hearth
 * (docs/runtime.md). Sealing is pure and runs in the worker; opening needs the root private key,
 * which stays on the main thread behind {@link RuntimeSealing}.
 */
import { accountIdOf, toHex } from '../crypto/ids.ts';
import { sealToRoot } from '../crypto/seal.ts';
import { isEd25519Point } from './ed25519.ts';
import type { SealedEnvelope } from '../wire/ownership.ts';

const KEY_BYTES = 32;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
/** the shortest envelope: head (key, nonce) and an authentication tag */
export const MIN_ENVELOPE_BYTES = KEY_BYTES + NONCE_BYTES + TAG_BYTES;

/** What `open_sealed` learns from the node: the plaintext, a refusal, or that it holds no key for the run. */
export type OpenOutcome = { opened: Uint8Array } | { opened: null; reason: 'refused' | 'no-key' };

/**
 * What the runtime needs from the node to open envelopes. The node answers for the run's executor
 * (an account): it opens only with a root key it holds for that account.
 */
export interface RuntimeSealing {
  open(executorId: Uint8Array, envelope: Uint8Array): Promise<OpenOutcome>;
}

/** The envelope bytes of `seal_to`, or null when the key is not a usable Ed25519 point. */
export function sealEnvelope(rootPublicKey: Uint8Array, plaintext: Uint8Array): Uint8Array | null {
  // the reference decompresses the key first (an encoding of no point is refused, not mapped)
  if (!isEd25519Point(rootPublicKey)) return null;
  let env: SealedEnvelope;
  try {
    const key = Buffer.from(rootPublicKey);
    env = sealToRoot({ accountId: accountIdOf(key), rootPublicKey: key.toString('hex'), rootEpoch: 0 }, plaintext);
  } catch {
    // not a point, or a small-order one the agreement refuses: the reference answers 0 for both
    return null;
  }
  return Buffer.concat([Buffer.from(env.ephemeralPublicKey, 'hex'), Buffer.from(env.nonce, 'hex'), Buffer.from(env.ciphertext, 'hex')]);
}

/** Parses the envelope layout; null when too short to hold the head and a tag. */
export function parseEnvelope(bytes: Uint8Array): SealedEnvelope | null {
  if (bytes.length < MIN_ENVELOPE_BYTES) return null;
  const b = Buffer.from(bytes);
  return {
    accountRootEpoch: 0,
    ephemeralPublicKey: b.subarray(0, KEY_BYTES).toString('hex'),
    nonce: b.subarray(KEY_BYTES, KEY_BYTES + NONCE_BYTES).toString('hex'),
    ciphertext: b.subarray(KEY_BYTES + NONCE_BYTES).toString('hex'),
  };
}

/** The part of the node's identity that opens envelopes sealed to its own account root. */
export interface RootHolder {
  readonly accountId: string;
  /** throws when the envelope does not open with this node's root */
  openSealedToRoot(envelope: SealedEnvelope): Uint8Array;
}

/**
 * The node's sealing access: a run whose executor is this node's account opens with the node's
 * account root; any other executor is a run the node holds no key for.
 */
export function identitySealing(identity: RootHolder): RuntimeSealing {
  return {
    async open(executorId, bytes) {
      if (toHex(executorId) !== identity.accountId) return { opened: null, reason: 'no-key' };
      const env = parseEnvelope(bytes);
      if (!env) return { opened: null, reason: 'refused' };
      try {
        return { opened: identity.openSealedToRoot(env) };
      } catch {
        // malformed, sealed to another key or tampered: deliberately indistinguishable
        return { opened: null, reason: 'refused' };
      }
    },
  };
}
