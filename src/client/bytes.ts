/**
 * @module client/bytes
 *
 * Byte fields for people (issue #16): the wire sends event payloads, presence state, metadata and
 * invitation fields as arrays of byte values. Shown as text when they are printable UTF-8 (what
 * applications mostly emit: JSON), as hex otherwise. Used by the CLI and the dashboard alike.
 */

const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;

/** Lowercase hex of the bytes. */
export function bytesToHex(bytes: ArrayLike<number>): string {
  let out = '';
  for (let i = 0; i < bytes.length; i++) out += (bytes[i]! & 0xff).toString(16).padStart(2, '0');
  return out;
}

/** The bytes as text when they are valid UTF-8 without control characters (tabs and newlines allowed). */
export function bytesAsText(bytes: ArrayLike<number>): string | undefined {
  try {
    const text = new TextDecoder('utf-8', { fatal: true }).decode(Uint8Array.from(bytes));
    return CONTROL.test(text) ? undefined : text;
  } catch {
    return undefined;
  }
}

/** Text when printable UTF-8, else `0x` followed by the hex. */
export function displayBytes(bytes: ArrayLike<number>): string {
  return bytesAsText(bytes) ?? `0x${bytesToHex(bytes)}`;
}

/** Is this an array of byte values (integers 0–255)? */
export function isByteArray(value: unknown): value is number[] {
  return Array.isArray(value) && value.every((v) => Number.isInteger(v) && v >= 0 && v <= 255);
}
