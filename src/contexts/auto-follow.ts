/**
 * Auto-follow (domain.md §4.3 "Auto-follow", §4.5 step 9; docs/sync.md "Auto-follow"): this node
 * joins, by itself, the contexts of the groups its account belongs to, so a namespace join makes
 * every context of the namespace readable here without `POST /contexts/{id}/join`.
 *
 * What is followed is derived from governance state, never from a queue of events: a context is
 * joined when it is registered in a group where this node's account
 * - has a direct member row with `autoFollow.contexts`, or
 * - is an inherited member through open subgroups (authority.ts) and its anchor row has both
 *   `autoFollow.contexts` and `autoFollow.subgroups`,
 * and this node holds no record of it yet (`ContextService.follow` decides that under the
 * context's write lock: a context created here, joined already, or left by the user keeps its
 * record and is never joined again automatically).
 *
 * A pass runs at start (so a restart in the middle of one resumes: whatever was joined is durable,
 * the rest is still wanted) and whenever governance stores ops (a join by invitation or admission,
 * a member added, a context registered, a flag changed — local or replicated). Passes never
 * overlap; ops stored during one run another after it. One pass joins at most `passLimit` (1,000)
 * contexts; the rest go to the next pass, which starts at once after it. Within a pass, joins are
 * paced by their first pulls (first-pulls.ts): a few at a time, a refused one re-synced soon.
 *
 * Joining is `ContextService.follow`, the explicit join's own path (identity, uninitialized record,
 * then context sync pulls a snapshot or a backfill and reports its status and events as for a
 * manual join). Each automatic join is recorded (`ctx.autofollow`, in the join's own batch): a
 * context this node joined automatically that is later detached from its group (or deleted) is
 * left, as `POST /contexts/{id}/leave` would (its identities dropped, its state kept).
 */
import { HearthError } from '../errors.ts';
import type { EventBus } from '../bus.ts';
import { FirstPulls } from './first-pulls.ts';
import { type Governance, type GroupState, inheritedAnchor, isMember, type NamespaceState } from '../governance/index.ts';
import { collect, type Space, type Store } from '../store/store.ts';
import type { ContextService } from './service.ts';
import type { ContextStore } from './store.ts';

/** the reference's bound on one auto-follow backfill pass (domain.md §7) */
export const AUTO_FOLLOW_PASS_LIMIT = 1_000;

export interface FollowCandidate {
  namespaceId: string;
  groupId: string;
  contextId: string;
  registeredAt: number;
}

/** What is kept of a context joined automatically. */
export interface AutoFollowRecord {
  namespaceId: string;
  groupId: string;
  /** Unix milliseconds */
  joinedAt: number;
}

export interface PassReport {
  /** contexts joined by this pass, in order */
  joined: string[];
  /** contexts left because they are no longer registered in a group */
  left: string[];
  /** contexts still wanted, for the next pass */
  remaining: number;
}

export interface AutoFollowDeps {
  governance: Pick<Governance, 'namespaces' | 'onOps'>;
  contexts: Pick<ContextService, 'follow' | 'leave' | 'registration' | 'sync'>;
  records: Pick<ContextStore, 'listMeta'>;
  store: Store;
  /** this node's account */
  account: string;
  now: () => number;
  /** after each pass (the node logs what it joined) */
  onPass?: (report: PassReport) => void;
  /** a join or leave that failed, or a whole pass (contextId ''); tried again on the next pass */
  onError?: (err: unknown, contextId: string) => void;
  passLimit?: number;
  /**
   * the node's bus: its `SyncStatus` frames say when a joined context's first pull ended, so a pass
   * paces its joins and re-syncs a refused first pull soon (first-pulls.ts); no pacing without it
   */
  bus?: Pick<EventBus, 'subscribe'>;
  firstPulls?: { max?: number; deadlineMs?: number; retriesMs?: readonly number[] };
}

/** Whether this account's node follows the contexts of `group` (module header). */
export function followsGroup(ns: NamespaceState, group: GroupState, account: string): boolean {
  const row = group.members[account];
  if (row) return row.autoFollow.contexts;
  const inherited = inheritedAnchor(ns, group, account);
  if (!inherited || !isMember(ns, group, account)) return false;
  return inherited.row.autoFollow.contexts && inherited.row.autoFollow.subgroups;
}

/** Every context this account's node should follow, oldest registration first. */
export function followable(namespaces: readonly NamespaceState[], account: string): FollowCandidate[] {
  const out: FollowCandidate[] = [];
  for (const ns of namespaces) {
    for (const group of Object.values(ns.groups)) {
      if (!followsGroup(ns, group, account)) continue;
      for (const [contextId, entry] of Object.entries(group.contexts)) {
        out.push({ namespaceId: ns.id, groupId: group.id, contextId, registeredAt: entry.registeredAt });
      }
    }
  }
  return out.sort((a, b) => a.registeredAt - b.registeredAt || (a.contextId < b.contextId ? -1 : a.contextId > b.contextId ? 1 : 0));
}

export class AutoFollow {
  private readonly joined: Space<AutoFollowRecord>;
  private readonly limit: number;
  private unsubscribe?: () => void;
  private stopped = false;
  private dirty = false;
  private running?: Promise<void>;
  /** the ids of `ctx.autofollow`, read once at the first pass */
  private recorded?: Set<string>;
  /**
   * followable contexts this node is known to hold a record of (listed once at the first pass, then
   * kept), so a pass does not list every context's record on each governance op
   */
  private held?: Set<string>;
  private readonly pulls?: FirstPulls;

  constructor(private readonly d: AutoFollowDeps) {
    this.joined = d.store.space<AutoFollowRecord>('ctx.autofollow');
    this.limit = Math.max(1, d.passLimit ?? AUTO_FOLLOW_PASS_LIMIT);
    if (d.bus) this.pulls = new FirstPulls({ bus: d.bus, resync: (id) => d.contexts.sync(id), ...d.firstPulls });
  }

  /** Hears of governance ops and runs a first pass (resuming one a restart interrupted). */
  start(): void {
    if (this.unsubscribe) return;
    this.stopped = false;
    this.unsubscribe = this.d.governance.onOps(() => this.kick());
    this.pulls?.start();
    this.kick();
  }

  /** Stops asking for passes and waits for the one running (a join in flight finishes). */
  async stop(): Promise<void> {
    this.stopped = true;
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    this.pulls?.stop();
    await this.running;
  }

  /** Resolves once no pass is running or wanted (tests). */
  async settled(): Promise<void> {
    while (this.running) await this.running;
  }

  /** The contexts this node joined automatically and still records. */
  async records(): Promise<Map<string, AutoFollowRecord>> {
    return new Map(await collect(this.joined.entries()));
  }

  private kick(): void {
    if (this.stopped) return;
    this.dirty = true;
    if (this.running) return;
    this.running = this.loop()
      .catch((err: unknown) => this.d.onError?.(err, '')) // the store failed: the next op or start tries again
      .finally(() => {
        this.running = undefined;
      });
  }

  private async loop(): Promise<void> {
    while (this.dirty && !this.stopped) {
      this.dirty = false;
      const report = await this.pass();
      this.d.onPass?.(report);
      if (report.remaining > 0) {
        this.dirty = true;
        await new Promise((r) => setImmediate(r)); // the next pass lets other work run first
      }
    }
  }

  private async pass(): Promise<PassReport> {
    this.recorded ??= new Set((await collect(this.joined.entries())).map(([id]) => id));
    const candidates = followable(this.d.governance.namespaces(), this.d.account);
    const held = (this.held ??= new Set((await this.d.records.listMeta()).map((m) => m.id)));
    // only followable ids are kept: one that stops being followable (detached, deleted, the flag
    // off) is looked at again under its lock if it becomes followable later
    const followableIds = new Set(candidates.map((c) => c.contextId));
    for (const id of held) if (!followableIds.has(id)) held.delete(id);
    const wanted = candidates.filter((c) => !held.has(c.contextId));
    const joined: string[] = [];
    for (const c of wanted.slice(0, this.limit)) {
      await this.pulls?.slot();
      if (this.stopped) break;
      const record: AutoFollowRecord = { namespaceId: c.namespaceId, groupId: c.groupId, joinedAt: this.d.now() };
      this.pulls?.hold(c.contextId); // before the join: its pull may end before `follow` answers
      try {
        if (await this.d.contexts.follow(c.contextId, [this.joined.putOp(c.contextId, record)])) {
          joined.push(c.contextId);
          this.recorded.add(c.contextId);
        } else this.pulls?.release(c.contextId);
        held.add(c.contextId);
      } catch (err) {
        this.pulls?.release(c.contextId);
        // unregistered meanwhile (a later op detached or deleted it): nothing to join
        if (!(err instanceof HearthError && err.kind === 'not_found')) this.d.onError?.(err, c.contextId);
      }
    }
    const left = this.stopped ? [] : await this.leaveDetached(this.recorded);
    return { joined, left, remaining: Math.max(0, wanted.length - this.limit) };
  }

  /** Leaves each context joined automatically that no group registers any more (module header). */
  private async leaveDetached(recorded: Set<string>): Promise<string[]> {
    const left: string[] = [];
    for (const contextId of [...recorded]) {
      if (this.d.contexts.registration(contextId)) continue;
      try {
        await this.d.contexts.leave(contextId);
        left.push(contextId);
      } catch (err) {
        // a context whose state went with its group (contexts/deletions.ts) has nothing to leave
        if (!(err instanceof HearthError && err.kind === 'not_found')) {
          this.d.onError?.(err, contextId);
          continue;
        }
      }
      await this.joined.del(contextId);
      recorded.delete(contextId);
    }
    return left;
  }
}
