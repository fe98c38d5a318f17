/**
 * Which rows of a context changed since a given state version (issue #33, the write path). The
 * context store moves a context's state version whenever a batch writes its state, private state
 * or index (store.ts `stateVersion`); this journal keeps, for the contexts written lately, the rows
 * each of those moves wrote. The runtime asks it when a worker comes back to a context under a new
 * version: the rows written since the worker's version are read again and sent with the job, and
 * the worker keeps every other row it holds (runtime hot-rows.ts / state-cache.ts). Before, a new
 * version dropped the worker's cache but for the rows of its last call, so each `set` of a random
 * key asked the main thread again, one blocking round trip per row, for rows nothing had changed.
 *
 * The answer is exact or absent: `changedSince` answers undefined (the caller starts the worker's
 * cache over, as before) when the journal no longer reaches back to that version, or when a move in
 * between wrote more rows than it keeps (a snapshot, a context's deletion). Bounded: MAX_ENTRIES
 * moves per context, MAX_ROWS rows per move, MAX_CONTEXTS contexts (least recently written go).
 */
import type { BatchOp } from '../store/store.ts';

/** A row as the runtime names it: its space and its key's bytes. */
export type ChangedRow = ['state' | 'private' | 'index', Uint8Array];

const SPACES: Readonly<Record<string, ChangedRow[0]>> = { 'ctx.state': 'state', 'ctx.private': 'private', 'ctx.index': 'index' };
/** moves kept per context: a worker that missed more starts its cache over */
const MAX_ENTRIES = 16;
/** rows kept per move: a larger move is recorded as "everything" */
const MAX_ROWS = 256;
const MAX_CONTEXTS = 1_024;

interface Entry {
  version: number;
  /** `<space>/<hex key>`; null: more than MAX_ROWS */
  rows: string[] | null;
}

interface Journal {
  /** every move after this version is in `entries` */
  horizon: number;
  entries: Entry[];
}

export class StateJournal {
  private readonly versions = new Map<string, number>();
  private readonly journals = new Map<string, Journal>();
  private seq = 0;

  /** The context's state version now (0 before any write this process saw). */
  version(contextId: string): number {
    return this.versions.get(contextId) ?? 0;
  }

  /**
   * A batch starts or ends: each context it writes state rows of moves to a new version, which
   * records them. (Once per context per batch: what a version promises is only that it differs.)
   */
  record(ops: readonly BatchOp[]): void {
    let moved: Map<string, string[]> | undefined;
    for (const op of ops) {
      const space = SPACES[op.space];
      if (space === undefined) continue;
      const slash = op.key.indexOf('/');
      const context = op.key.slice(0, slash);
      moved ??= new Map();
      let rows = moved.get(context);
      if (rows === undefined) moved.set(context, (rows = []));
      rows.push(`${space}/${op.key.slice(slash + 1)}`);
    }
    if (moved) for (const [context, rows] of moved) this.move(context, rows);
  }

  /**
   * The rows of `contextId` written by the moves after `version` (an earlier value of `version()`),
   * each once; undefined when that is not known any more.
   */
  changedSince(contextId: string, version: number): ChangedRow[] | undefined {
    const now = this.version(contextId);
    if (version === now) return [];
    const journal = this.journals.get(contextId);
    if (!journal || version < journal.horizon || version > now) return undefined;
    const ids = new Set<string>();
    for (let i = journal.entries.length - 1; i >= 0 && journal.entries[i].version > version; i--) {
      const rows = journal.entries[i].rows;
      if (rows === null) return undefined;
      for (const id of rows) ids.add(id);
    }
    return [...ids].map((id) => {
      const slash = id.indexOf('/');
      return [id.slice(0, slash) as ChangedRow[0], new Uint8Array(Buffer.from(id.slice(slash + 1), 'hex'))];
    });
  }

  private move(context: string, rows: string[]): void {
    const before = this.version(context);
    const version = ++this.seq;
    this.versions.set(context, version);
    let journal = this.journals.get(context);
    if (journal) this.journals.delete(context); // most recently written last
    else journal = { horizon: before, entries: [] };
    journal.entries.push({ version, rows: rows.length > MAX_ROWS ? null : rows });
    if (journal.entries.length > MAX_ENTRIES) journal.horizon = journal.entries.shift()!.version;
    this.journals.set(context, journal);
    if (this.journals.size > MAX_CONTEXTS) this.journals.delete(this.journals.keys().next().value!);
  }
}
