/**
 * The rows of the state browser (issue #25 §4): what a listing view method answered (a map, or a
 * list) as key, size and a preview — UTF-8 text when the value is text, hex when it is bytes that
 * are not. Sizes are the bytes of the value as the method returned it (a string's UTF-8, a byte
 * array's length, otherwise its JSON). No rendering, unit-tested.
 */
import { isByteArray, stringifyJson } from '../../../src/client/index.ts';
import { pretty } from './format.ts';

export interface EntryRow {
  key: string;
  size: number;
  preview: string;
  /** how the preview is written */
  as: 'text' | 'hex' | 'json';
}

const PREVIEW_CHARS = 120;
const utf8 = new TextEncoder();

/** Text that a person can read: no control characters other than whitespace. */
const readable = (s: string) => !/[\u0000-\u0008\u000e-\u001f\u007f\ufffd]/.test(s);

const cut = (s: string) => (s.length > PREVIEW_CHARS ? `${s.slice(0, PREVIEW_CHARS)}…` : s);

export function describeValue(value: unknown): Omit<EntryRow, 'key'> {
  if (typeof value === 'string') return { size: utf8.encode(value).length, preview: cut(value), as: 'text' };
  if (isByteArray(value) && value.length > 0) {
    const bytes = Uint8Array.from(value as number[]);
    const text = new TextDecoder('utf-8', { fatal: false }).decode(bytes);
    if (readable(text)) return { size: bytes.length, preview: cut(text), as: 'text' };
    return { size: bytes.length, preview: cut([...bytes].map((b) => b.toString(16).padStart(2, '0')).join(' ')), as: 'hex' };
  }
  const json = pretty(value).replace(/\s+/g, ' ');
  return { size: utf8.encode(stringifyJson(value) ?? 'null').length, preview: cut(json), as: 'json' };
}

/** The rows of a listing: a map's keys in order, a list's indices, anything else one row `(value)`. */
export function entryRows(value: unknown): EntryRow[] {
  if (Array.isArray(value) && !isByteArray(value)) {
    // a list of [key, value] pairs reads as a map
    if (value.every((v) => Array.isArray(v) && v.length === 2 && typeof v[0] === 'string')) {
      return (value as [string, unknown][]).map(([k, v]) => ({ key: k, ...describeValue(v) }));
    }
    return value.map((v, i) => ({ key: String(i), ...describeValue(v) }));
  }
  if (value instanceof Map) return [...value.entries()].map(([k, v]) => ({ key: String(k), ...describeValue(v) }));
  if (value !== null && typeof value === 'object') return Object.entries(value).map(([k, v]) => ({ key: k, ...describeValue(v) }));
  if (value === null || value === undefined) return [];
  return [{ key: '(value)', ...describeValue(value) }];
}

/**
 * How a raw state key reads (the raw rows fallback): its text in quotes when every byte is
 * printable ASCII, else its hex; `(empty key)` for a zero-length key.
 */
export function rawKeyLabel(hex: string): string {
  if (hex === '') return '(empty key)';
  const bytes = hex.match(/../g)!.map((h) => parseInt(h, 16));
  return bytes.every((b) => b >= 0x20 && b <= 0x7e) ? `"${String.fromCharCode(...bytes)}"` : hex;
}

/** A raw value (base64) as a person reads it: text when printable UTF-8, else spaced hex. */
export function rawValueText(base64: string): { text: string; as: 'text' | 'hex' } {
  const bin = atob(base64);
  const bytes = Uint8Array.from(bin, (c) => c.charCodeAt(0));
  try {
    const text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    if (readable(text)) return { text, as: 'text' };
  } catch {
    // not UTF-8: hex below
  }
  return { text: [...bytes].map((b) => b.toString(16).padStart(2, '0')).join(' '), as: 'hex' };
}
