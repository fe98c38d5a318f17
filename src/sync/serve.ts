/**
 * The serving side of context state sync (domain.md §2.5–§2.7; the driver is service.ts): heads,
 * backfill and snapshots, answered over the stream to peers whose node key speaks for a member of
 * the context's group, in clear over the Noise-encrypted stream. A request without a valid
 * `contextId` or with malformed heads penalizes the sender; a peer that is no member is refused.
 */
import type { ContextExecutor, ContextMeta, ContextStore } from '../contexts/index.ts';
import { batches, type JsonObject, type KindContext, type Network, PeerRefusal, type StreamRouter } from '../network/index.ts';
import type { DeltaApplier } from './apply.ts';
import type { SyncStatusBoard } from './status.ts';
import { memberAccount, type Registration } from './verify.ts';
import { deltaFrames, FRAME_BUDGET, isHex64, KINDS, parseIds } from './wire.ts';

export interface SyncServerDeps {
  records: ContextStore;
  executor: ContextExecutor;
  /** the context's group and namespace as governance knows them */
  locate: (contextId: string) => Registration | undefined;
  network: Network;
  router: StreamRouter;
  status: SyncStatusBoard;
  applier: DeltaApplier;
}

/** Registers the three serving kinds on the router when made. */
export class SyncServer {
  constructor(private readonly d: SyncServerDeps) {
    const serve = { maxRequestBytes: 64 * 1024, timeoutMs: 60_000 };
    d.router.register(KINDS.heads, (req, ctx) => this.serveHeads(req, ctx), serve);
    d.router.register(KINDS.backfill, (req, ctx) => this.serveBackfill(req, ctx), serve);
    d.router.register(KINDS.snapshot, (req, ctx) => this.serveSnapshot(req, ctx), { ...serve, timeoutMs: 300_000 });
  }

  private async served(req: JsonObject, ctx: KindContext): Promise<{ reg: Registration; meta: ContextMeta }> {
    if (!isHex64(req.contextId)) {
      this.d.network.penalize(ctx.peer, 'invalid_message', `${ctx.kind} needs contextId`);
      throw new PeerRefusal(`${ctx.kind} needs contextId`);
    }
    const reg = this.d.locate(req.contextId);
    const meta = await this.d.records.getMeta(req.contextId);
    if (!reg || !meta) throw new PeerRefusal('NotMaterialized: this node does not hold that context');
    if (memberAccount(reg, ctx.peer) === undefined) throw new PeerRefusal('not a member of the context’s group');
    this.d.status.heard(meta.id, ctx.peer);
    return { reg, meta };
  }

  private async serveHeads(req: JsonObject, ctx: KindContext): Promise<JsonObject> {
    const { meta } = await this.served(req, ctx);
    return { contextId: meta.id, heads: meta.dagHeads, rootHash: meta.rootHash };
  }

  private async serveBackfill(req: JsonObject, ctx: KindContext): Promise<AsyncIterable<unknown>> {
    const heads = parseIds(req.heads);
    if (!heads) {
      this.d.network.penalize(ctx.peer, 'invalid_message', 'backfill heads malformed');
      throw new PeerRefusal('backfill needs at most 256 heads');
    }
    const { reg, meta } = await this.served(req, ctx);
    const deltas = await this.d.applier.lacking(meta.id, heads);
    // far behind, and nothing this node lacks: a snapshot is cheaper than replaying every delta
    // (not from a copy that has not migrated yet: it would refuse the snapshot)
    const above = typeof req.snapshotAbove === 'number' && Number.isSafeInteger(req.snapshotAbove) ? req.snapshotAbove : undefined;
    const dag = await this.d.applier.dag(meta.id);
    if (above !== undefined && deltas.length > above && heads.every((h) => dag.has(h)) && !upgradePending(reg, meta)) {
      return (async function* () {
        yield { contextId: meta.id, snapshotAdvised: deltas.length };
      })();
    }
    return (async function* () {
      yield* deltaFrames(meta.id, deltas);
    })();
  }

  /**
   * A snapshot: read under the context's read lock (so rows, heads and root belong together), then
   * streamed: the boundary, the state rows, the delta records.
   */
  private async serveSnapshot(req: JsonObject, ctx: KindContext): Promise<AsyncIterable<unknown>> {
    const { reg, meta: first } = await this.served(req, ctx);
    // rows of the version this node still runs would be wrong under the group's current one
    const stale = upgradePending(reg, first);
    if (stale) throw new PeerRefusal(`no snapshot from here: ${stale}`);
    const taken = await this.d.executor.locks.run(first.id, false, async () => {
      const meta = (await this.d.records.getMeta(first.id))!;
      const rows: [string, string][] = [];
      for await (const [k, v] of this.d.records.stateEntries(meta.id)) rows.push([k, Buffer.from(v).toString('hex')]);
      const deltas = await this.d.applier.lacking(meta.id, []);
      return { meta, rows, deltas };
    });
    return (async function* () {
      yield { part: 'boundary', contextId: taken.meta.id, rootHash: taken.meta.rootHash, heads: taken.meta.dagHeads, rowCount: taken.rows.length, deltaCount: taken.deltas.length };
      for (const rows of batches(taken.rows, FRAME_BUDGET, ([k, v]) => k.length + v.length + 8)) yield { part: 'rows', rows };
      for (const frame of deltaFrames(taken.meta.id, taken.deltas)) yield { part: 'deltas', ...frame };
    })();
  }
}

/**
 * Why remote deltas of a context wait (apply.ts `deferral`): its group's latest upgrade, not
 * aborted, targets a version this node's copy does not run yet (its migration is queued, running,
 * failed, or waits for the version to be installed here).
 */
export function upgradePending(reg: Registration | undefined, meta: ContextMeta): string | undefined {
  const u = reg?.group.upgrade;
  if (!u || u.aborted || reg.group.appKey !== u.toAppKey || meta.bundleBlobId === u.toAppKey) return undefined;
  return `group ${reg.group.id.slice(0, 12)}… moved to version ${u.toVersion}; this node's copy has not migrated yet (see the group's upgrade status), so remote deltas wait until it has`;
}
