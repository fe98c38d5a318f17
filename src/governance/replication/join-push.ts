/**
 * A joiner's own join op until a member node has it (issue #32's NAT lab, docs/network.md "Known
 * defect" fixed): until a member folds that op, the joiner's key is bound nowhere but on the joiner,
 * so the members refuse its gossip, its heads and its pulls (replicator.ts `follow`,
 * `serveBackfill`). A direct push is the only way in, and the connection it first meets may be
 * closing (a relayed one that DCUtR replaces with a direct one). So the op is kept and pushed again
 * — shortly after a push no member answered, on every new connection and on every heartbeat — until
 * a member answers a push or `ttlMs` passes. Nothing here is persisted: after a restart the pending
 * join's own retry (invitations/service.ts `resolvePending`) and the catch-up take over.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { PeerKey } from '../../network/index.ts';
import type { GovOp } from '../types.ts';

export interface JoinPushDeps {
  /** pushes `op` to the connected member nodes (or to those of `only`); true when one answered */
  push(op: GovOp, only?: readonly PeerKey[]): Promise<boolean>;
  now(): number;
  /** the replicator's lifetime: a stop ends the waits */
  signal: AbortSignal;
  /** the waits before the next tries after a push no member answered (later tries: connect and heartbeat) */
  retryMs: readonly number[];
  /** how long an unanswered op is pushed again */
  ttlMs: number;
}

export class UnansweredJoins {
  private readonly ops = new Map<string, { op: GovOp; at: number }>();

  constructor(private readonly d: JoinPushDeps) {}

  get size(): number {
    return this.ops.size;
  }

  /**
   * Pushes a join op just authored here; resolves after that first push. While no member has
   * answered, it is pushed again after each of `retryMs` (in the background), then on connect and heartbeat.
   */
  async send(op: GovOp): Promise<void> {
    this.ops.set(op.id, { op, at: this.d.now() });
    await this.pushOne(op);
    void this.retry(op);
  }

  private async retry(op: GovOp): Promise<void> {
    for (const waitMs of this.d.retryMs) {
      if (!this.ops.has(op.id) || this.d.signal.aborted) return;
      await sleep(waitMs, undefined, { signal: this.d.signal }).catch(() => undefined);
      if (this.ops.has(op.id)) await this.pushOne(op);
    }
  }

  /** Pushes every kept op again (to `peer` only when it has just connected); drops those older than `ttlMs`. */
  async again(peer?: PeerKey): Promise<void> {
    const now = this.d.now();
    for (const [id, { op, at }] of this.ops) {
      if (now - at > this.d.ttlMs) this.ops.delete(id);
      else await this.pushOne(op, peer === undefined ? undefined : [peer]);
    }
  }

  private async pushOne(op: GovOp, only?: readonly PeerKey[]): Promise<void> {
    if (this.d.signal.aborted) return;
    // an answer, "added" or "already known", means the member holds it
    if (await this.d.push(op, only)) this.ops.delete(op.id);
  }
}
