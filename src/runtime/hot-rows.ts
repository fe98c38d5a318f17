/**
 * What one runtime worker's state cache holds, as the main thread tracks it (issue #22; the worker
 * side is state-cache.ts): per context, the state version of the worker's last call there and the
 * rows (at most HOT_ROWS) that call and earlier calls under the same version read or wrote. When
 * the context's version has moved at the worker's next call there, those rows are read on the main
 * thread and sent with the job, so the worker's cache carries over instead of starting empty.
 *
 * Kept apart from runtime.ts because it runs once per call on the main thread: a row is known by
 * a latin1 string of its key (no hex encoding), and a call under an unchanged version that read
 * only rows already known (the steady state of reads) costs one lookup per row and nothing else.
 */
import type { CallResult } from './contract.ts';
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
   * rows first, then the ones earlier calls under the same version left, up to the bound.
   */
  note(context: string, version: number | undefined, read: Row[] | undefined, result: CallResult): void {
    if (version === undefined) return;
    const earlier = this.contexts.get(context);
    const calls: Row[] = read ? [...read] : [];
    if (result.ok) {
      for (const [space, writes] of [['state', result.writes], ['private', result.privateWrites], ['index', result.indexWrites]] as const) {
        for (const [key] of writes) calls.push([space, key]);
      }
    }
    this.contexts.delete(context); // most recently used last
    if (earlier?.version === version && calls.every(([space, key]) => earlier.rows.has(idOf(space, key)))) {
      // nothing new: the rows the worker holds for the context are the ones already known
      this.contexts.set(context, earlier);
      return;
    }
    const rows = new Map<string, Row>();
    for (const [space, key] of calls) {
      if (rows.size >= this.maxRows) break;
      const id = idOf(space, key);
      if (!rows.has(id)) rows.set(id, [space, key]);
    }
    if (earlier?.version === version) {
      for (const [id, row] of earlier.rows) {
        if (rows.size >= this.maxRows) break;
        if (!rows.has(id)) rows.set(id, row);
      }
    }
    this.contexts.set(context, { version, rows });
    while (this.contexts.size > this.maxContexts) this.contexts.delete(this.contexts.keys().next().value!);
  }
}
