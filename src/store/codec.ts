/** Value encoding shared by the store implementations. */
import type { Codec } from './store.ts';

export function encodeValue(codec: Codec, value: unknown): Uint8Array {
  if (codec === 'bytes') {
    if (!(value instanceof Uint8Array)) throw new TypeError('bytes space takes Uint8Array values');
    return value;
  }
  return Buffer.from(JSON.stringify(value), 'utf8');
}

export function decodeValue<T>(codec: Codec, raw: Uint8Array): T {
  if (codec === 'bytes') return raw as T;
  return JSON.parse(Buffer.from(raw).toString('utf8')) as T;
}
