/**
 * The raw storage rows of a context (issue #25 §4; docs/contexts.md "Raw state rows"): a read-only,
 * paged view of the replicated application state (`ctx.state`, the guest's `storage_*` keyspace)
 * for the dashboard's state browser and `hearth context state`, when the application's ABI names no
 * listing method. hearth-only (the spec has no such route), admin-only. No HTTP here.
 *
 * Only the context's own `ctx.state` rows are read: never another context's (the prefix is the
 * context id and a `/`), never its private state, ordered index, meta, members or deltas.
 *
 * Bounds, so one request never holds the process: a page is at most {@link MAX_LIMIT} rows and ends
 * early once its keys pass {@link PAGE_KEY_BYTES} (guest keys may be up to 1 MiB each); a preview is
 * the first {@link PREVIEW_BYTES} bytes; a value answer carries at most {@link MAX_VALUE_BYTES} and
 * says when it was cut (`truncated`), with the row's full `size`.
 */
import { badRequest, notFound } from '../errors.ts';
import type { ContextStore } from './store.ts';
import type { RawStateEntry, RawStatePage, RawStateValue } from '../wire/contexts.ts';

export const DEFAULT_LIMIT = 100;
export const MAX_LIMIT = 500;
export const PREVIEW_BYTES = 64;
export const PAGE_KEY_BYTES = 1024 * 1024;
export const MAX_VALUE_BYTES = 1024 * 1024;

/** The page and value shapes are the wire's (src/wire/contexts.ts). */
export type RawStateRow = RawStateEntry;

const HEX_KEY = /^(?:[0-9a-fA-F]{2})*$/;

/** A state key given by a caller, as lowercase hex: 400 naming the parameter when it is not hex bytes. */
export function parseHexKey(value: string | undefined, name: string): string | undefined {
  if (value === undefined) return undefined;
  if (!HEX_KEY.test(value)) throw badRequest(`Invalid ${name}: expected a state key as an even number of hex digits`);
  return value.toLowerCase();
}

/** The page size a caller asked for: 400 unless an integer from 1 to {@link MAX_LIMIT}. */
export function parseLimit(value: string | undefined): number {
  if (value === undefined) return DEFAULT_LIMIT;
  const n = /^\d{1,9}$/.test(value) ? Number(value) : NaN;
  if (!(n >= 1 && n <= MAX_LIMIT)) throw badRequest(`Invalid limit: expected an integer from 1 to ${MAX_LIMIT}`);
  return n;
}

/** Text a person can read: no control characters other than tab and line breaks. */
const printable = (s: string) => !/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\ufffd]/.test(s);
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The preview of a value: UTF-8 when its first bytes are printable text (a cut in the middle of a
 * character is moved back to the character's start), else hex. Empty values preview as empty text.
 */
export function preview(value: Uint8Array): Pick<RawStateRow, 'preview' | 'previewEncoding'> {
  const head = value.subarray(0, PREVIEW_BYTES);
  // when the value goes on, up to 3 bytes at the end may be the start of a character cut in two
  const tries = value.length > PREVIEW_BYTES ? 4 : 1;
  for (let drop = 0; drop < tries && drop < head.length; drop++) {
    try {
      const text = strictUtf8.decode(head.subarray(0, head.length - drop));
      if (printable(text)) return { preview: text, previewEncoding: 'utf8' };
      break;
    } catch {
      // not UTF-8 at this length: try one byte shorter
    }
  }
  if (head.length === 0) return { preview: '', previewEncoding: 'utf8' };
  return { preview: Buffer.from(head).toString('hex'), previewEncoding: 'hex' };
}

export class RawStateReader {
  constructor(private readonly store: ContextStore) {}

  private async requireHeld(contextId: string): Promise<void> {
    if (!(await this.store.getMeta(contextId))) throw notFound('Context not found');
  }

  /** One page of the context's state rows in key order, after `after` (exclusive). */
  async page(contextId: string, opts: { after?: string; limit?: number } = {}): Promise<RawStatePage> {
    await this.requireHeld(contextId);
    const limit = Math.min(Math.max(1, opts.limit ?? DEFAULT_LIMIT), MAX_LIMIT);
    const entries: RawStateRow[] = [];
    let keyBytes = 0;
    let more = false;
    for await (const [key, value] of this.store.stateEntries(contextId, opts.after)) {
      if (entries.length >= limit || (entries.length > 0 && keyBytes >= PAGE_KEY_BYTES)) {
        more = true;
        break;
      }
      keyBytes += key.length / 2;
      entries.push({ key, size: value.length, ...preview(value) });
    }
    return { entries, next: more ? entries[entries.length - 1].key : null };
  }

  /** The value of one row (bounded, see the header); 404 when the context or the row is not here. */
  async value(contextId: string, key: string): Promise<RawStateValue> {
    await this.requireHeld(contextId);
    const value = await this.store.stateValue(contextId, key);
    if (value === undefined) throw notFound(`No state row with key '${key.length > 80 ? `${key.slice(0, 80)}…` : key}' in this context`);
    const truncated = value.length > MAX_VALUE_BYTES;
    const shown = truncated ? value.subarray(0, MAX_VALUE_BYTES) : value;
    return { key, size: value.length, encoding: 'base64', value: Buffer.from(shown).toString('base64'), truncated };
  }
}
