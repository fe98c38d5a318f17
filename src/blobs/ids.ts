/**
 * Blob ids, hashes and context ids on the wire (reference README "Id encodings"): 64 lowercase hex
 * characters of 32 bytes; base58 (bitcoin alphabet) of 32 bytes from older clients is accepted on
 * input. Answers are always hex.
 */

const HEX64 = /^[0-9a-fA-F]{64}$/;
const B58_ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
const B58_INDEX = new Map([...B58_ALPHABET].map((c, i) => [c, i]));

/** Decodes base58 (bitcoin alphabet); `undefined` when the text is not base58. */
export function decodeBase58(text: string): Uint8Array | undefined {
  if (text.length === 0) return new Uint8Array(0);
  let zeros = 0;
  while (zeros < text.length && text[zeros] === '1') zeros++;
  const bytes: number[] = []; // little-endian base-256 digits
  for (const ch of text) {
    const v = B58_INDEX.get(ch);
    if (v === undefined) return undefined;
    let carry = v;
    for (let i = 0; i < bytes.length; i++) {
      carry += bytes[i]! * 58;
      bytes[i] = carry & 0xff;
      carry >>= 8;
    }
    while (carry > 0) {
      bytes.push(carry & 0xff);
      carry >>= 8;
    }
  }
  // leading '1's are leading zero bytes; the arithmetic part never has leading zeros
  const out = new Uint8Array(zeros + bytes.length);
  for (let i = 0; i < bytes.length; i++) out[out.length - 1 - i] = bytes[i]!;
  return out;
}

/**
 * 64-hex (any case) or base58 of exactly 32 bytes → 64 lowercase hex; `undefined` when neither.
 */
export function normalizeId(text: string): string | undefined {
  if (HEX64.test(text)) return text.toLowerCase();
  if (text.length < 32 || text.length > 44) return undefined;
  const bytes = decodeBase58(text);
  if (!bytes || bytes.length !== 32) return undefined;
  return Buffer.from(bytes).toString('hex');
}
