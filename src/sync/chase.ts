/**
 * Chasing what a node is missing of a context (docs/sync.md "Catch-up"; issue 23 §5, issue #37
 * item 6): held deltas' parents and heads a peer told of, pulled from the connected members in
 * turn until an exchange leaves nothing missing; held deltas whose parents no member served are
 * dropped after their timeout and their origins penalised. The sync service (service.ts) starts a
 * chase from gossip, heartbeats and its periodic check; this file owns the loop.
 */
import type { Logger } from 'pino';
import type { PeerKey } from '../network/index.ts';
import type { DeltaApplier } from './apply.ts';
import { originOf } from './pending.ts';

export interface ChaseDeps {
  applier: Pick<DeltaApplier, 'pendingCount' | 'knows' | 'expire'>;
  /** connected peers whose node key speaks for a member of the context's group */
  holders(contextId: string): PeerKey[];
  /** one exchange with `peer` (service.ts `pull`): true when it completed */
  pull(contextId: string, peer: PeerKey): Promise<boolean>;
  penalize(peer: PeerKey, why: string): void;
  now(): number;
  logger: Logger;
  /** the sync service's lifetime */
  signal: AbortSignal;
  /** how long a held delta waits for its parents once every member was asked */
  parentTimeoutMs: number;
}

interface Chase {
  again: boolean;
  preferred?: PeerKey;
  want: string[];
}

export class MissingChase {
  private readonly chasing = new Map<string, Chase>();

  constructor(private readonly d: ChaseDeps) {}

  /**
   * Pulls what this node is missing of a context (held deltas' parents, `want`) from any connected
   * member peer: `preferred` — the node that told us of it — first when it is connected here, then
   * the others, until an exchange leaves nothing of it missing. The publisher of a relayed delta is
   * one candidate, not the only one: in a star (B and C bootstrap from A) C is not connected to B,
   * while A, which relayed B's delta, holds its parents (issue 23 §5). One chase per context at a
   * time; a trigger while one runs makes it go round once more.
   */
  run(contextId: string, preferred?: PeerKey, want: readonly string[] = []): void {
    const running = this.chasing.get(contextId);
    if (running) {
      running.again = true;
      running.preferred = preferred ?? running.preferred;
      running.want = [...new Set([...running.want, ...want])];
      return;
    }
    const chase: Chase = { again: true, preferred, want: [...want] };
    this.chasing.set(contextId, chase);
    void this.loop(contextId, chase)
      .catch((e: unknown) => this.d.logger.debug({ contextId, err: (e as Error).message }, 'pulling missing deltas failed'))
      .finally(() => this.chasing.delete(contextId));
  }

  private async loop(contextId: string, chase: Chase): Promise<void> {
    const { signal } = this.d;
    while (chase.again && !signal.aborted) {
      chase.again = false;
      const asked = this.d.now();
      const holders = this.d.holders(contextId);
      const first = chase.preferred;
      const order = first !== undefined && holders.includes(first) ? [first, ...holders.filter((p) => p !== first)] : holders;
      for (const peer of order) {
        if (signal.aborted) break;
        if ((await this.d.pull(contextId, peer)) && !(await this.stillMissing(contextId, chase.want))) break;
      }
      if (holders.length > 0 && !signal.aborted) this.expireHeld(contextId, asked);
    }
  }

  /**
   * Held deltas whose parents every connected member was asked for (a round that began at `asked`)
   * and that have waited `parentTimeoutMs`: dropped, and their origins penalised, once per delta —
   * an honest node signs a delta only over heads it holds and serves (issue #37 item 6).
   */
  private expireHeld(contextId: string, asked: number): void {
    const gone = this.d.applier.expire(contextId, Math.min(asked, this.d.now() - this.d.parentTimeoutMs));
    for (const h of gone) this.d.penalize(originOf(h.delta), `delta ${h.delta.id.slice(0, 12)}… of context ${contextId.slice(0, 12)}…: its parents never arrived`);
    if (gone.length > 0) this.d.logger.info({ contextId, dropped: gone.length }, 'held deltas dropped: their parents never arrived');
  }

  /** Whether deltas wait for parents here, or one of `want` is still unknown. */
  private async stillMissing(contextId: string, want: readonly string[]): Promise<boolean> {
    if (this.d.applier.pendingCount(contextId) > 0) return true;
    for (const id of want) if (!(await this.d.applier.knows(contextId, id))) return true;
    return false;
  }
}
