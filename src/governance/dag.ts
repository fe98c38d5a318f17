/**
 * The causal structure of one namespace's governance log (domain.md §4.1–§4.2: ops carry their
 * parents, the log is a DAG with heads). Every op names the heads its author had applied, and its
 * `seq` is one more than the highest `seq` among its parents (a Lamport height), so sorting ops by
 * (seq, id) is a linear extension of the causal order that every node computes alike: that total
 * order is the order the log folds in (log.ts). Pure bookkeeping: no I/O, no state.
 */

export interface DagEntry {
  seq: bigint;
  parents: readonly string[];
}

/** Width of the zero-padded seq in order keys: u64 max has 20 digits. */
const SEQ_DIGITS = 20;

/** The fold-order key of an op: keys sort as (seq, id), lexicographically. */
export const orderKey = (seq: bigint | string, id: string): string => `${seq.toString().padStart(SEQ_DIGITS, '0')}/${id}`;

export class OpDag {
  private readonly entries = new Map<string, DagEntry>();
  private readonly headSet = new Set<string>();
  private maxSeq = 0n;

  get size(): number {
    return this.entries.size;
  }

  has(id: string): boolean {
    return this.entries.has(id);
  }

  seqOf(id: string): bigint | undefined {
    return this.entries.get(id)?.seq;
  }

  /** Ops no other known op names as a parent, sorted (the parents of the next local op). */
  heads(): string[] {
    return [...this.headSet].sort();
  }

  /** The seq a new op authored now takes: above every known op. */
  nextSeq(): bigint {
    return this.maxSeq + 1n;
  }

  highestSeq(): bigint {
    return this.maxSeq;
  }

  /** Parents of an op that this DAG does not hold yet. */
  missing(parents: readonly string[]): string[] {
    return parents.filter((p) => !this.entries.has(p));
  }

  /**
   * The seq an op with these parents must carry (one above its highest parent; 1 for a root), or
   * undefined when a parent is unknown.
   */
  expectedSeq(parents: readonly string[]): bigint | undefined {
    let max = 0n;
    for (const p of parents) {
      const e = this.entries.get(p);
      if (!e) return undefined;
      if (e.seq > max) max = e.seq;
    }
    return max + 1n;
  }

  /** Records an op whose parents are all known (callers check `missing` first). */
  add(id: string, seq: bigint, parents: readonly string[]): void {
    if (this.entries.has(id)) return;
    this.entries.set(id, { seq, parents: [...parents] });
    for (const p of parents) this.headSet.delete(p);
    this.headSet.add(id);
    if (seq > this.maxSeq) this.maxSeq = seq;
  }

  /**
   * `heads`, then their ancestors breadth-first, at most `limit` ids: what to send a peer asked for
   * what we lack (`lacking` on its side). Heads alone are not enough while ops are written
   * everywhere: the peer skips the heads it does not know yet (our newest ops, still in flight to
   * it), and with none left it would send every op it holds; the ancestors it knows cover the rest
   * (issue #24, docs/network.md "Scale"). Listing an ancestor of a head never hides an op we lack.
   */
  frontier(heads: readonly string[], limit: number): string[] {
    const out: string[] = [];
    const seen = new Set<string>();
    let level = heads.filter((h) => !seen.has(h) && seen.add(h));
    while (level.length > 0 && out.length < limit) {
      const next: string[] = [];
      for (const id of level) {
        if (out.length >= limit) break;
        out.push(id);
        for (const p of this.entries.get(id)?.parents ?? []) if (!seen.has(p) && this.entries.has(p)) next.push(p), seen.add(p);
      }
      level = next;
    }
    return out;
  }

  /**
   * `frontier` that also reaches far back: the last `tail` of the `limit` ids are ancestors beyond
   * the breadth-first part, along the longest path from the first head (highest-seq parent first),
   * at offsets 0, 1, 3, 7, 15, … past it, ending with the root when the walk gets there. A peer
   * that lacks more of our newest ops than the breadth-first part names (a node that wrote many ops
   * while apart) still finds an id it knows within twice the depth of what it lacks, instead of
   * none, which would make it send every op it holds. Governance pulls name this (log.ts).
   */
  reachingFrontier(heads: readonly string[], limit: number, tail = 16): string[] {
    const out = this.frontier(heads, Math.max(1, limit - tail));
    const seen = new Set(out);
    let cur = heads.find((h) => this.entries.has(h));
    let depth = 0;
    let start = -1;
    let step = 1;
    while (cur !== undefined && out.length < limit) {
      if (start < 0 && !seen.has(cur)) start = depth; // the path leaves the breadth-first part here
      const known = this.entries.get(cur)!.parents.filter((p) => this.entries.has(p));
      const isRoot = known.length === 0;
      if (start >= 0 && (depth === start + step - 1 || isRoot)) {
        if (!seen.has(cur)) out.push(cur), seen.add(cur);
        if (depth === start + step - 1) step *= 2;
      }
      if (isRoot) break;
      cur = known.reduce((a, b) => (this.entries.get(a)!.seq >= this.entries.get(b)!.seq ? a : b));
      depth++;
    }
    return out;
  }

  /**
   * What a peer whose heads are `theirHeads` lacks: every op that is not an ancestor-or-self of one
   * of those heads, in fold order. Heads this DAG does not know are skipped (the peer holds ops we
   * lack; it will get ours and we theirs).
   */
  lacking(theirHeads: readonly string[]): string[] {
    const covered = new Set<string>();
    const stack = theirHeads.filter((h) => this.entries.has(h));
    while (stack.length > 0) {
      const id = stack.pop()!;
      if (covered.has(id)) continue;
      covered.add(id);
      for (const p of this.entries.get(id)!.parents) if (!covered.has(p)) stack.push(p);
    }
    const out: [string, string][] = [];
    for (const [id, e] of this.entries) if (!covered.has(id)) out.push([orderKey(e.seq, id), id]);
    return out.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, id]) => id);
  }
}
