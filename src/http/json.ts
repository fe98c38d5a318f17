/**
 * Reply serialisation that keeps u64 values exact (reference README "64-bit numbers"): a BigInt in
 * a payload is written as a bare JSON integer, whatever its size.
 */
import { randomBytes } from 'node:crypto';

/**
 * A per-process random mark: user strings cannot forge it, so only real BigInts become bare
 * integers. JSON.stringify escapes the leading NUL as the six characters `\u0000`.
 */
const TAG = `u64${randomBytes(8).toString('hex')}:`;
const MARK = `\u0000${TAG}`;
const ESCAPED = `\\u0000${TAG}`;
const MARKED = new RegExp(`"\\\\u0000${TAG}(\\d+)"`, 'g');

export function stringifyExact(payload: unknown): string {
  // Most payloads hold no BigInt, and JSON.stringify without a replacer is several times faster
  // (issue #14); it throws on a BigInt, and only then is the payload written with the replacer.
  try {
    return JSON.stringify(payload);
  } catch {
    /* a BigInt (or a cycle, which the replacer pass throws on again) */
  }
  const text = JSON.stringify(payload, (_k, v) => (typeof v === 'bigint' ? `${MARK}${v.toString()}` : v));
  return text.includes(ESCAPED) ? text.replace(MARKED, '$1') : text;
}
