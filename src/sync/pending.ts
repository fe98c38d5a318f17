/**
 * Deltas held for parents this node does not hold yet (domain.md §2.6; docs/sync.md "Ordering",
 * "Limits"; issue #37 item 6). A member can sign and seal deltas naming parents that exist nowhere:
 * each is valid on its own, so only what happens to it while held can tell. Hence three bounds:
 *
 * - per context, `perContext` deltas; past it the oldest delta of the origin holding the most goes,
 *   so one origin's flood evicts its own deltas, not an honest writer's;
 * - per origin (the signing node) and context, `perOrigin`; past it the origin's new deltas are not
 *   held (a later pull brings them again, parents first, when they are genuine);
 * - in time: a delta whose parents were asked for from every connected member and still did not
 *   arrive within `parentTimeoutMs` expires with every held delta waiting on it. An honest node only
 *   signs deltas over heads it holds and serves, so the caller penalises the origin of an expired
 *   delta, and for `suspectMs` that origin may hold nothing: its deltas are applied when their
 *   parents are here, dropped otherwise (the heads heartbeat still pulls what it really wrote).
 *
 * Memory follows what is held: the parent → children index loses a delta's entries when the delta
 * leaves, and the suspects are swept.
 */
import { GENESIS_PARENT, type DeltaRecord } from '../contexts/index.ts';

export interface PendingLimits {
  /** deltas held per context (domain.md §7: 10k) */
  perContext: number;
  /** deltas one origin node may have held per context */
  perOrigin: number;
  /** how long a held delta waits for its parents once they were asked for */
  parentTimeoutMs: number;
  /** how long an origin whose held deltas expired may hold none */
  suspectMs: number;
}

export const PENDING_LIMITS: PendingLimits = { perContext: 10_000, perOrigin: 1_000, parentTimeoutMs: 30_000, suspectMs: 10 * 60_000 };

export interface Held {
  delta: DeltaRecord;
  /** the peer it came from */
  from?: string;
  /** when it was held */
  at: number;
}

/** What `hold` did: held (possibly evicting another), already held, or refused by a bound. */
export type HoldOutcome = 'held' | 'duplicate' | 'origin_full' | 'suspect';

interface ContextHeld {
  byId: Map<string, Held>;
  /** parent id → ids of held deltas naming it */
  children: Map<string, Set<string>>;
  perOrigin: Map<string, number>;
}

const SWEEP_SUSPECTS_AT = 1_024;

export const originOf = (d: DeltaRecord): string => d.origin ?? d.author;

export class PendingDeltas {
  private readonly contexts = new Map<string, ContextHeld>();
  /** origins whose held deltas expired: until when they may hold none */
  private readonly suspects = new Map<string, number>();

  constructor(
    readonly limits: PendingLimits,
    private readonly now: () => number,
  ) {}

  count(contextId: string): number {
    return this.contexts.get(contextId)?.byId.size ?? 0;
  }

  has(contextId: string, id: string): boolean {
    return this.contexts.get(contextId)?.byId.has(id) ?? false;
  }

  get(contextId: string, id: string): Held | undefined {
    return this.contexts.get(contextId)?.byId.get(id);
  }

  values(contextId: string): Iterable<Held> {
    return this.contexts.get(contextId)?.byId.values() ?? [];
  }

  /** Held deltas per origin, most first (for the status' detail). */
  origins(contextId: string): [string, number][] {
    return [...(this.contexts.get(contextId)?.perOrigin ?? [])].sort(([, a], [, b]) => b - a);
  }

  /** Whether the origin's held deltas expired lately (it may hold none now). */
  suspected(origin: string): boolean {
    const until = this.suspects.get(origin);
    if (until === undefined) return false;
    if (until > this.now()) return true;
    this.suspects.delete(origin);
    return false;
  }

  hold(delta: DeltaRecord, from?: string): HoldOutcome {
    const origin = originOf(delta);
    if (this.suspected(origin)) return 'suspect';
    let c = this.contexts.get(delta.contextId);
    if (!c) this.contexts.set(delta.contextId, (c = { byId: new Map(), children: new Map(), perOrigin: new Map() }));
    if (c.byId.has(delta.id)) return 'duplicate';
    if ((c.perOrigin.get(origin) ?? 0) >= this.limits.perOrigin) return 'origin_full';
    if (c.byId.size >= this.limits.perContext) this.evictFromLargest(c);
    c.byId.set(delta.id, { delta, from, at: this.now() });
    c.perOrigin.set(origin, (c.perOrigin.get(origin) ?? 0) + 1);
    for (const p of delta.parents) {
      if (p === GENESIS_PARENT) continue;
      let kids = c.children.get(p);
      if (!kids) c.children.set(p, (kids = new Set()));
      kids.add(delta.id);
    }
    return 'held';
  }

  /** Takes a held delta out (it is being applied); undefined when it is not held. */
  take(contextId: string, id: string): Held | undefined {
    const c = this.contexts.get(contextId);
    const h = c?.byId.get(id);
    if (!c || !h) return undefined;
    this.remove(c, h);
    if (c.byId.size === 0) this.contexts.delete(contextId);
    return h;
  }

  /** Ids of held deltas naming `parent` (the index entry is dropped: the parent is now applied). */
  childrenOf(contextId: string, parent: string): string[] {
    const c = this.contexts.get(contextId);
    const kids = c?.children.get(parent);
    if (!c || !kids) return [];
    c.children.delete(parent);
    return [...kids];
  }

  /**
   * Drops the deltas held since before `cutoff`, with every held delta waiting on them, and marks
   * their origins suspect. Answers what was dropped.
   */
  expire(contextId: string, cutoff: number): Held[] {
    const c = this.contexts.get(contextId);
    if (!c) return [];
    const out: Held[] = [];
    const queue: string[] = [];
    for (const h of c.byId.values()) if (h.at < cutoff) queue.push(h.delta.id);
    for (let i = 0; i < queue.length; i++) {
      const id = queue[i]!;
      const h = c.byId.get(id);
      if (!h) continue;
      for (const kid of c.children.get(id) ?? []) queue.push(kid);
      c.children.delete(id);
      this.remove(c, h);
      out.push(h);
    }
    if (c.byId.size === 0) this.contexts.delete(contextId);
    const until = this.now() + this.limits.suspectMs;
    for (const h of out) this.suspects.set(originOf(h.delta), until);
    if (this.suspects.size > SWEEP_SUSPECTS_AT) for (const o of [...this.suspects.keys()]) this.suspected(o);
    return out;
  }

  forget(contextId: string): void {
    this.contexts.delete(contextId);
  }

  private remove(c: ContextHeld, h: Held): void {
    c.byId.delete(h.delta.id);
    const origin = originOf(h.delta);
    const n = (c.perOrigin.get(origin) ?? 1) - 1;
    if (n > 0) c.perOrigin.set(origin, n);
    else c.perOrigin.delete(origin);
    for (const p of h.delta.parents) {
      const kids = c.children.get(p);
      kids?.delete(h.delta.id);
      if (kids?.size === 0) c.children.delete(p);
    }
  }

  /** At the context's bound: the oldest held delta of the origin holding the most goes. */
  private evictFromLargest(c: ContextHeld): void {
    let largest: string | undefined;
    let most = 0;
    for (const [origin, n] of c.perOrigin) if (n > most) [largest, most] = [origin, n];
    for (const h of c.byId.values()) {
      if (originOf(h.delta) === largest) return this.remove(c, h);
    }
  }
}
