/**
 * A worker's read-through cache of contexts' state (issue #14): a guest's `storage_read` used to
 * cost a blocking round-trip to the main thread each time. The main thread tags each call with its
 * context's state version (`CallRequest.stateVersion`: it changes whenever a batch writes the
 * context's state, private state or index), so what calls read under one version stays true for
 * every later call under the same version. A call under another version drops the context's
 * entries first — unless the main thread sent the current values of the rows this worker last
 * read for the context (`refresh`, issue #22: after a write, the next call found the cache empty
 * and asked again for every row, most of them rows that write had just written): those are kept
 * under the new version. When the refresh holds every row written since the version the cache
 * holds (`carryFrom`: the context store's journal said which, issue #33), the context's other
 * entries are kept too. Only base values are kept (absent keys too); a call's own writes stay in
 * its overlay and never reach the cache.
 *
 * Bounded per worker: at most `maxContexts` contexts (the least recently used is dropped) and
 * `maxBytes` of keys and values in all (a context that would pass it starts over).
 */
import type { Space, SyncBackend } from './host-state.ts';
import { rowId as idOf } from './protocol.ts';

/**
 * Keys and values a worker keeps at most, all contexts together: 8 MiB (issue #22 memory; was 32).
 * A pool of up to one worker per core and one more held up to 4 × 32 MiB once filled; the rows a
 * call reads are few (a kv_store `set` reads 8), so 8 MiB still holds the hot rows of all 64 contexts
 * a worker keeps (STATE_CACHE_CONTEXTS) unless their values are large.
 */
export const STATE_CACHE_BYTES = 8 * 1024 * 1024;
export const STATE_CACHE_CONTEXTS = 64;
/** the cost of an entry besides its key and value bytes */
const ENTRY_OVERHEAD = 64;

/** the spaces whose `get` is kept (index ranges and blobs always ask) */
const KEPT: ReadonlySet<Space> = new Set(['state', 'private', 'index']);

interface ContextEntries {
  version: number;
  bytes: number;
  values: Map<string, Uint8Array | null>;
}

export class StateCache {
  private readonly contexts = new Map<string, ContextEntries>();
  private bytes = 0;
  hits = 0;
  misses = 0;

  constructor(
    private readonly maxBytes = STATE_CACHE_BYTES,
    private readonly maxContexts = STATE_CACHE_CONTEXTS,
  ) {}

  /**
   * `inner` with its `get` answered from the cache for `context` at `version` (unchanged without a
   * version). `refresh` (rows read by the main thread under `version`) replaces what the context
   * held under another version, rather than starting it empty — or, when the context is held under
   * `carryFrom` (the refresh then holds every row written since), is written over what it holds,
   * which is kept. `read` collects the ids of the distinct kept rows the call reads (protocol.ts
   * `rowId`), up to `max`.
   */
  wrap(
    inner: SyncBackend,
    context: string,
    version: number | undefined,
    refresh?: Array<[Space, Uint8Array, Uint8Array | null]>,
    read?: { rows: string[]; max: number },
    carryFrom?: number,
  ): SyncBackend {
    if (version === undefined) return inner;
    const entries = this.entriesOf(context, version, refresh ? carryFrom : undefined);
    if (refresh) for (const [space, key, value] of refresh) if (KEPT.has(space)) this.keep(entries, idOf(space, key), value);
    const seen = read ? new Set<string>() : undefined;
    const get = (space: Space, key: Uint8Array): Uint8Array | undefined => {
      if (!KEPT.has(space)) return inner.get(space, key);
      const id = idOf(space, key);
      if (seen && !seen.has(id) && read!.rows.length < read!.max) {
        seen.add(id);
        read!.rows.push(id);
      }
      const kept = entries.values.get(id);
      if (kept !== undefined) {
        this.hits++;
        return kept ?? undefined;
      }
      this.misses++;
      const value = inner.get(space, key);
      this.keep(entries, id, value ?? null);
      return value;
    };
    return Object.assign(Object.create(inner) as SyncBackend, { get });
  }

  get size(): { contexts: number; bytes: number } {
    return { contexts: this.contexts.size, bytes: this.bytes };
  }

  private entriesOf(context: string, version: number, carryFrom: number | undefined): ContextEntries {
    let e = this.contexts.get(context);
    if (e) {
      this.contexts.delete(context); // most recently used last
      if (e.version === carryFrom) e.version = version; // the refresh brings the rest up to date
      else if (e.version !== version) {
        this.bytes -= e.bytes;
        e = undefined;
      }
    }
    if (!e) e = { version, bytes: 0, values: new Map() };
    this.contexts.set(context, e);
    while (this.contexts.size > this.maxContexts) this.drop(this.contexts.keys().next().value!);
    return e;
  }

  private keep(e: ContextEntries, id: string, value: Uint8Array | null): void {
    const had = e.values.get(id);
    if (had !== undefined) {
      // replaced: its old cost goes
      const old = ENTRY_OVERHEAD + id.length + (had?.length ?? 0);
      e.bytes -= old;
      this.bytes -= old;
      e.values.delete(id);
    }
    const cost = ENTRY_OVERHEAD + id.length + (value?.length ?? 0);
    if (cost > this.maxBytes / 4) return; // a huge value is not worth the room
    while (this.bytes + cost > this.maxBytes && this.contexts.size > 0) {
      const oldest = this.contexts.keys().next().value!;
      if (this.contexts.get(oldest) === e) {
        // this context alone fills the cache: it starts over
        this.bytes -= e.bytes;
        e.values.clear();
        e.bytes = 0;
        break;
      }
      this.drop(oldest);
    }
    e.values.set(id, value);
    e.bytes += cost;
    this.bytes += cost;
  }

  private drop(context: string): void {
    const e = this.contexts.get(context);
    if (!e) return;
    this.bytes -= e.bytes;
    this.contexts.delete(context);
  }
}
