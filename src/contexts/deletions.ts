/**
 * Local state of contexts whose group or namespace was deleted (issue #17 finding 10). Deleting a
 * group (with its subtree) or a namespace takes its contexts out of governance, on this node or
 * on a peer whose op replicates here; this module then forgets what the node holds of them (meta,
 * members, state, private state, index, deltas), as deleting the context itself would.
 *
 * The governance appliers announce the contexts on the bus (`GroupDeleted`, `NamespaceDeleted`,
 * internal kinds that are never stream frames); each is dropped under its write lock, and only
 * when no group still registers it. A node that stops between the deletion and the drop finishes
 * at its next start (`sweep`): a context whose group no longer exists anywhere is dropped then.
 * A context merely detached from its group (`…/contexts/{id}/remove`) keeps its group and its
 * state. Docs: docs/contexts.md "Deleting a group or namespace".
 */
import type { EventBus, NodeEvent } from '../bus.ts';
import type { Governance } from '../governance/index.ts';
import type { ContextExecutor } from './executor.ts';
import type { ContextService } from './service.ts';
import type { ContextStore } from './store.ts';

export interface ReaperDeps {
  store: ContextStore;
  executor: ContextExecutor;
  contexts: ContextService;
  governance: Governance;
  bus: EventBus;
  onError?: (err: unknown) => void;
}

const KINDS = new Set(['GroupDeleted', 'NamespaceDeleted']);

export class DeletedContextReaper {
  private unsubscribe?: () => void;
  private pending: Promise<unknown> = Promise.resolve();

  constructor(private readonly d: ReaperDeps) {}

  start(): void {
    this.unsubscribe ??= this.d.bus.subscribe((e) => this.onEvent(e));
  }

  stop(): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
  }

  /** Resolves once every drop started so far has finished (tests, shutdown). */
  settled(): Promise<void> {
    return this.pending.then(() => undefined);
  }

  /** Drops contexts this node holds whose group is gone from every namespace it knows. */
  async sweep(): Promise<string[]> {
    const orphans = (await this.d.store.listMeta()).filter((m) => !this.d.governance.locate(m.groupId)).map((m) => m.id);
    return this.drop(orphans);
  }

  /**
   * Drops the local state of each context no group registers any more (registrations in
   * `deletedNamespace`, which is going away, do not count); answers the ones dropped.
   */
  async drop(contextIds: readonly string[], deletedNamespace?: string): Promise<string[]> {
    const dropped: string[] = [];
    for (const id of contextIds) {
      const done = await this.d.executor.locks.run(id, true, async () => {
        const reg = this.d.contexts.registration(id);
        if (!(await this.d.store.getMeta(id)) || (reg && reg.ns.id !== deletedNamespace)) return false;
        await this.d.store.store.batch(await this.d.store.dropOps(id));
        return true;
      });
      if (done) dropped.push(id);
    }
    return dropped;
  }

  private onEvent(e: NodeEvent): void {
    if (e.type !== 'group' || !KINDS.has(e.kind)) return;
    const ids = (e.data.contextIds as string[] | undefined) ?? [];
    if (ids.length === 0) return;
    const deletedNamespace = e.kind === 'NamespaceDeleted' ? e.namespaceId : undefined;
    this.pending = this.pending.then(() => this.drop(ids, deletedNamespace)).catch((err: unknown) => this.d.onError?.(err));
  }
}
