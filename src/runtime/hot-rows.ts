/**
 * What one runtime worker's state cache holds, as the main thread tracks it (issue #22; the worker
 * side is state-cache.ts): per context, the state version of the worker's last call there and the
 * rows (at most HOT_ROWS) that call and earlier calls under the same version read or wrote. When
 * the context's version has moved at the worker's next call there, those rows are read on the main
 * thread and sent with the job, so the worker's cache carries over instead of starting empty.
 *
 * Kept apart from runtime.ts because it runs once per call on the main thread: a row is known by
 * a latin1 string of its key (no hex encoding), and the rows are one insertion-ordered Map per
 * context, least recent first, updated in place (a call costs a lookup and a move per row it
 * touched; the runtime before rebuilt and re-encoded the whole list on every call: ~30 µs of CPU
 * per kv_store `get`, now ~2–8).
 */
import type { CallResult } from './call-types.ts';
import type { Space } from './host-state.ts';
import { HOT_ROWS } from './protocol.ts';
import { STATE_CACHE_CONTEXTS } from './state-cache.ts';

type Row = [Space, Uint8Array];

const idOf = (space: Space, key: Uint8Array) => `${space}:${Buffer.from(key.buffer, key.byteOffset, key.byteLength).toString('latin1')}`;

export class HotRows {
  /** least recently used context first */
  private readonly contexts = new Map<string, { version: number; rows: Map<string, Row> }>();

  constructor(
    private readonly maxRows = HOT_ROWS,
    private readonly maxContexts = STATE_CACHE_CONTEXTS,
  ) {}

  /** whether the worker ran `context` lately (its cache may hold the context's rows: affinity) */
  has(context: string): boolean {
    return this.contexts.has(context);
  }

  /** The rows to read again for a call of `context` under `version`; undefined when none need it. */
  stale(context: string, version: number | undefined): Row[] | undefined {
    const hot = this.contexts.get(context);
    if (!hot || version === undefined || hot.version === version) return undefined;
    return [...hot.rows.values()];
  }

  /**
   * A call of `context` under `version` read `read` and (when it succeeded) wrote its writes: those
   * rows become the most recent ones, after the rows earlier calls under the same version left (a
   * call under another version starts the context over); past the bound, the least recent go.
   */
  note(context: string, version: number | undefined, read: Row[] | undefined, result: CallResult): void {
    if (version === undefined) return;
    let hot = this.contexts.get(context);
    this.contexts.delete(context); // most recently used context last
    if (!hot || hot.version !== version) hot = { version, rows: new Map() };
    const rows = hot.rows;
    // a row known already moves to the end (a Map keeps insertion order): no copy, no re-encoding
    const touch = (space: Space, key: Uint8Array) => {
      const id = idOf(space, key);
      const known = rows.get(id);
      if (known) rows.delete(id);
      rows.set(id, known ?? [space, key]);
    };
    if (read) for (const [space, key] of read) touch(space, key);
    if (result.ok) {
      for (const [key] of result.writes) touch('state', key);
      for (const [key] of result.privateWrites) touch('private', key);
      for (const [key] of result.indexWrites) touch('index', key);
    }
    for (const id of rows.keys()) {
      if (rows.size <= this.maxRows) break;
      rows.delete(id);
    }
    this.contexts.set(context, hot);
    while (this.contexts.size > this.maxContexts) this.contexts.delete(this.contexts.keys().next().value!);
  }
}
