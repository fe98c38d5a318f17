/**
 * What one runtime worker's state cache holds, as the main thread tracks it (issue #22; the worker
 * side is state-cache.ts): per context, the state version of the worker's last call there and the
 * rows (at most HOT_ROWS) that call and earlier calls under the same version read or wrote. When
 * the context's version has moved at the worker's next call there, those rows are read on the main
 * thread and sent with the job, so the worker's cache carries over instead of starting empty. When
 * the context store can say which rows were written since the worker's version (its journal,
 * `CallRequest.changedSince`), only those are read and the worker keeps all else it holds.
 *
 * Kept apart from runtime.ts because it runs once per call on the main thread: a row is known by
 * its id (protocol.ts `rowId`: a latin1 string of its key, no hex encoding), which the worker
 * sends as is, and the rows are one insertion-ordered Map per context, least recent first, updated
 * in place (a call costs a lookup and a move per row it touched; the runtime before rebuilt and
 * re-encoded the whole list on every call: ~30 µs of CPU per kv_store `get`, then ~2–8). A row's
 * key bytes are made from its id only when the rows are read again (`stale`, after a write).
 */
import type { CallResult } from './call-types.ts';
import type { Space } from './host-state.ts';
import { HOT_ROWS, rowId, rowOf } from './protocol.ts';
import { STATE_CACHE_CONTEXTS } from './state-cache.ts';

type Row = [Space, Uint8Array];

export class HotRows {
  /** least recently used context first */
  private readonly contexts = new Map<string, { version: number; rows: Set<string> }>();

  constructor(
    private readonly maxRows = HOT_ROWS,
    private readonly maxContexts = STATE_CACHE_CONTEXTS,
  ) {}

  /** whether the worker ran `context` lately (its cache may hold the context's rows: affinity) */
  has(context: string): boolean {
    return this.contexts.has(context);
  }

  /**
   * The rows to read again for a call of `context` under `version`; undefined when none need it.
   * With `changedSince` (the context store's journal) and a short enough answer, they are the rows
   * written since the worker's version, and `carry` names that version: the worker keeps the rest
   * of what it holds. Otherwise they are the rows the worker last read, and it drops the rest.
   */
  stale(context: string, version: number | undefined, changedSince?: (since: number) => Row[] | undefined): { rows: Row[]; carry?: number } | undefined {
    const hot = this.contexts.get(context);
    if (!hot || version === undefined || hot.version === version) return undefined;
    const changed = changedSince?.(hot.version);
    if (changed && changed.length <= this.maxRows) return { rows: changed, carry: hot.version };
    return { rows: [...hot.rows].map(rowOf) };
  }

  /**
   * A call of `context` under `version` read the rows `read` (their ids) and (when it succeeded) wrote its writes: those
   * rows become the most recent ones, after the rows earlier calls under the same version left (a
   * call under another version starts the context over); past the bound, the least recent go.
   */
  note(context: string, version: number | undefined, read: readonly string[] | undefined, result: CallResult): void {
    if (version === undefined) return;
    let hot = this.contexts.get(context);
    this.contexts.delete(context); // most recently used context last
    if (!hot || hot.version !== version) hot = { version, rows: new Set() };
    const rows = hot.rows;
    // a row known already moves to the end (a Set keeps insertion order): no copy, no re-encoding
    const touch = (id: string) => {
      rows.delete(id);
      rows.add(id);
    };
    if (read) for (const id of read) touch(id);
    if (result.ok) {
      for (const [key] of result.writes) touch(rowId('state', key));
      for (const [key] of result.privateWrites) touch(rowId('private', key));
      for (const [key] of result.indexWrites) touch(rowId('index', key));
    }
    for (const id of rows) {
      if (rows.size <= this.maxRows) break;
      rows.delete(id);
    }
    this.contexts.set(context, hot);
    while (this.contexts.size > this.maxContexts) this.contexts.delete(this.contexts.keys().next().value!);
  }
}
