/**
 * Spent warrant nonces (domain.md §4.7): a warrant's nonce is monotonic per author device, and a
 * relay spends each once. As the reference's peers do, a nonce is judged in a 64-wide sliding window
 * per (scope, author device): above the highest spent it is fresh; within 64 below it, fresh unless
 * spent; further below, stale. So warrants minted in parallel may arrive out of order, and none is
 * ever spent twice. Pure functions: the relay's node-local ledger (intents) and the governance
 * state (context and governance intents, spent by appliers) share them.
 */
import { badRequest } from '../errors.ts';

export const NONCE_WINDOW = 64n;

/** u64 values as decimal strings (exact; JSON-safe). */
export interface NonceLedger {
  max: string;
  /** spent nonces within the window below (and including) `max` */
  spent: string[];
}

declare module '../governance/types.ts' {
  interface NamespaceExtensions {
    /**
     * Warrant nonces spent by delegated ops, per `<scope group>/<author device key>` (src/delegation):
     * every node spends them when it applies the op. Absent on older state.
     */
    delegatedNonces?: Record<string, NonceLedger>;
  }
}

export function isFresh(ledger: NonceLedger | undefined, nonce: bigint): boolean {
  if (!ledger) return true;
  const max = BigInt(ledger.max);
  if (nonce > max) return true;
  if (max - nonce >= NONCE_WINDOW) return false;
  return !ledger.spent.includes(nonce.toString());
}

/** The ledger after spending `nonce` (which must be fresh), trimmed to the window. */
export function spend(ledger: NonceLedger | undefined, nonce: bigint): NonceLedger {
  const max = ledger && BigInt(ledger.max) > nonce ? BigInt(ledger.max) : nonce;
  const spent = [...(ledger?.spent ?? []), nonce.toString()].filter((n) => max - BigInt(n) < NONCE_WINDOW);
  return { max: max.toString(), spent };
}

/** 400 for a nonce this ledger already spent (or one below its window). */
export function requireFresh(ledger: NonceLedger | undefined, nonce: bigint): void {
  if (!isFresh(ledger, nonce)) throw badRequest(`warrant nonce ${nonce} is already spent for this author device (or is more than ${NONCE_WINDOW} below its newest); mint a warrant with a fresh nonce`);
}
