/**
 * The reference's `domain_hash` (admin-wire-b §1.1), written a second time for tests: a test checks
 * an id the node derived (account, namespace, pairing statement) against this, not against
 * src/crypto/ids.ts, so a slip in the node's copy cannot pass for the right answer.
 */
import { createHash } from 'node:crypto';

/** SHA-256(u64le(len(domain)) ‖ domain ‖ Σ u64le(len(part)) ‖ part). */
export function domainHash(domain: string, parts: Buffer[]): Buffer {
  const h = createHash('sha256');
  const len = (n: number) => {
    const b = Buffer.alloc(8);
    b.writeBigUInt64LE(BigInt(n));
    return b;
  };
  h.update(len(domain.length)).update(domain);
  for (const p of parts) h.update(len(p.length)).update(p);
  return h.digest();
}
