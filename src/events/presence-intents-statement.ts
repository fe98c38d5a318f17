/**
 * What an account's device signs for one relayed presence update (admin spec "Delegated execution";
 * reference `calimero_node_primitives::presence`): the borsh of `PresenceStatement`, signed raw by
 * the device's Ed25519 key.
 *
 *   statement  = "calimero/presence/1" (19 bytes) ‖ context_id(32) ‖ author(32) ‖ u64le seq ‖ u64le sent_at_ms ‖ state_hash(32)
 *   state_hash = sha256(borsh(Option<Vec<u8>>)): a retract (`None`) is `[0]`, `Some(v)` is `[1] ‖ u32le(len) ‖ v`
 *
 * The relay rebuilds the statement itself (context from the path, author from the certificate's
 * device key), so a client cannot name another context or author.
 */
import { createHash } from 'node:crypto';
import { ed25519Verify } from '../crypto/keys.ts';

/** `PRESENCE_DOMAIN`: part of the signed bytes. */
export const PRESENCE_DOMAIN = Buffer.from('calimero/presence/1', 'utf8');

export interface PresenceStatement {
  /** 64 hex */
  contextId: string;
  /** the device signing key, 64 hex */
  author: string;
  seq: bigint;
  sentAtMs: bigint;
  /** null: a retraction */
  state: Uint8Array | null;
}

export function presenceStateHash(state: Uint8Array | null): Buffer {
  const h = createHash('sha256');
  if (state === null) return h.update(Buffer.from([0])).digest();
  const len = Buffer.alloc(4);
  len.writeUInt32LE(state.length);
  return h.update(Buffer.from([1])).update(len).update(state).digest();
}

/** `PresenceStatement::signing_bytes`. */
export function presenceSigningBytes(s: PresenceStatement): Buffer {
  const nums = Buffer.alloc(16);
  nums.writeBigUInt64LE(s.seq, 0);
  nums.writeBigUInt64LE(s.sentAtMs, 8);
  return Buffer.concat([PRESENCE_DOMAIN, Buffer.from(s.contextId, 'hex'), Buffer.from(s.author, 'hex'), nums, presenceStateHash(s.state)]);
}

/** Whether `signature` (64 bytes) is the author's over the statement. */
export function verifyPresenceSignature(s: PresenceStatement, signature: Uint8Array): boolean {
  return ed25519Verify(s.author, presenceSigningBytes(s), signature);
}
