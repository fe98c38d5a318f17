/**
 * Runs migrations on this node after an upgrade op applied (domain.md §4.6; the op's applier only
 * changes governance state). One job per upgrade op: every local context of the upgraded groups is
 * moved to the target version in turn, under the context's write lock, so writes wait while it
 * migrates and never interleave with it.
 *
 * Per context: when the target version's embedded ABI declares `migrations` (docs/governance.md
 * "Upgrades and migrations"), the entry for the context's version runs in the target wasm over the
 * context's state, and its writes, the new root and the new version are committed in one batch;
 * without declared migrations the version is swapped as is (layout-compatible). A migration that
 * fails commits nothing: the context keeps running its previous version and the failure is
 * recorded for `status` and `retry`.
 *
 * Progress goes out on the event stream keyed on the namespace root (admin-wire-b §10.4):
 * `MigrationStarted` when a job begins, `CascadeProgress` after each context (admins only),
 * `MigrationProgress` when a job ends, and `MigrationCompleted` once every upgraded group finished.
 */
import type { NodeIdentity } from '../identity/identity.ts';
import { type ApplicationCatalog, compareVersions } from '../applications/index.ts';
import type { Clock } from '../clock.ts';
import { unixSecs } from '../clock.ts';
import { type ContextMeta, type Contexts, releaseOf, UNINITIALIZED_HASH } from '../contexts/index.ts';
import type { EventBus } from '../bus.ts';
import { HearthError } from '../errors.ts';
import type { Governance, GroupState, NamespaceState } from '../governance/index.ts';
import type { UpgradeProgress } from './progress.ts';
import { fleetRollup, type PeerReports } from './rollup.ts';
import type { GroupUpgradeRecord } from './types.ts';
import type { MigrationFailureReason } from '../wire/upgrades.ts';

export interface MigratorDeps {
  governance: Governance;
  contexts: Contexts;
  applications: ApplicationCatalog;
  identity: NodeIdentity;
  bus: EventBus;
  clock: Clock;
  progress: UpgradeProgress;
  onError: (err: unknown) => void;
  /** the other members' migration reports, for the fleet counts of `MigrationProgress` */
  reports?: PeerReports;
}

export interface MigrationJob {
  namespaceId: string;
  upgradeId: string;
  groupIds: string[];
  /** announce with MigrationStarted (not for a retry) */
  announce: boolean;
}

/** The migration entry the target ABI declares for `fromVersion`: a method name, or null to swap as is. */
export function migrationEntry(abi: unknown, fromVersion: string | undefined): string | null {
  const list = (abi as { migrations?: unknown } | null)?.migrations;
  if (list === undefined || list === null) return null;
  if (!Array.isArray(list)) throw new MigrationRefusal('no_migration_path', 'the target ABI’s "migrations" is not a list');
  if (list.length === 0) return null;
  const entry = list.find(
    (e): e is { method: string } =>
      typeof e === 'object' && e !== null && typeof (e as { method?: unknown }).method === 'string' && ((e as { from?: unknown }).from === undefined || (e as { from?: unknown }).from === fromVersion),
  );
  if (!entry) throw new MigrationRefusal('no_migration_path', `the target version declares no migration from version ${fromVersion ?? 'unknown'}`);
  return entry.method;
}

class MigrationRefusal extends Error {
  constructor(
    readonly reason: MigrationFailureReason,
    message: string,
    /** the target's bundle, when it is what this node lacks */
    readonly awaitsBundle?: string,
  ) {
    super(message);
  }
}

export class Migrator {
  private readonly queue: MigrationJob[] = [];
  private running: Promise<void> | undefined;
  private current: MigrationJob | undefined;
  private abort = new AbortController();
  private stopped = true;

  constructor(private readonly d: MigratorDeps) {}

  start(): void {
    this.stopped = false;
    this.abort = new AbortController();
    this.kick();
  }

  /** Ends the job in progress at the next context (the one migrating is aborted) and waits for it. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.abort.abort();
    await this.running;
  }

  enqueue(job: MigrationJob): void {
    this.queue.push(job);
    this.kick();
  }

  /** Whether a job touching this group is queued or running. */
  busy(groupId: string): boolean {
    return [this.current, ...this.queue].some((j) => j?.groupIds.includes(groupId));
  }

  /** Resolves when nothing is queued or running (tests, and the CLI's --wait through status). */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  private kick(): void {
    if (this.running || this.stopped || this.queue.length === 0) return;
    this.running = (async () => {
      for (let job = this.queue.shift(); job && !this.stopped; job = this.queue.shift()) {
        this.current = job;
        try {
          await this.process(job);
        } catch (err) {
          this.d.onError(err);
        } finally {
          this.current = undefined;
        }
      }
    })().finally(() => {
      this.running = undefined;
      this.kick();
    });
  }

  private upgraded(namespaceId: string, job: MigrationJob): { ns: NamespaceState; groups: Array<{ group: GroupState; u: GroupUpgradeRecord }> } | undefined {
    const ns = this.d.governance.namespace(namespaceId);
    if (!ns) return undefined;
    const groups = job.groupIds
      .map((id) => ns.groups[id])
      .filter((g): g is GroupState => g?.upgrade?.id === job.upgradeId && !g.upgrade.aborted)
      .map((group) => ({ group, u: group.upgrade! }));
    return { ns, groups };
  }

  private async process(job: MigrationJob): Promise<void> {
    const first = this.upgraded(job.namespaceId, job);
    if (!first || first.groups.length === 0) return;
    const { progress } = this.d;
    const u0 = first.groups[0].u;
    if (job.announce) {
      let total = 0;
      for (const { group, u } of first.groups) total += (await progress.counts(group, u)).contexts.length;
      this.publish(job.namespaceId, 'MigrationStarted', { fromVersion: u0.fromVersion, toVersion: u0.toVersion, toStateVersion: u0.toStateVersion, localContextsTotal: total });
    }
    for (const groupId of job.groupIds) {
      const counts = await this.groupCounts(job, groupId);
      if (!counts) continue;
      for (const contextId of counts.contexts) {
        if (this.stopped) return;
        // The group's upgrade may have been aborted meanwhile: stop moving its contexts.
        const live = this.upgraded(job.namespaceId, { ...job, groupIds: [groupId] })?.groups[0];
        if (!live) break;
        if (live.u.toAppKey === (await this.d.contexts.records.getMeta(contextId))?.bundleBlobId) continue;
        if (await progress.failure(job.upgradeId, contextId)) continue;
        await this.migrate(contextId, live.u);
        const now = await progress.counts(live.group, live.u);
        this.publish(job.namespaceId, 'CascadeProgress', { subgroupId: groupId, localContextsSwapped: now.swapped.length, localContextsTotal: now.contexts.length });
      }
      const after = await this.groupCounts(job, groupId);
      if (after && after.swapped.length === after.contexts.length) await progress.markDone(job.upgradeId, groupId, unixSecs(this.d.clock));
    }
    const end = this.upgraded(job.namespaceId, job);
    if (!end) return;
    const rollup = await fleetRollup(this.d, end.ns);
    this.publish(job.namespaceId, 'MigrationProgress', { migrated: rollup.migrated, inProgress: rollup.inProgress, unknown: rollup.unknown, failed: rollup.failed, total: rollup.total });
    let complete = end.groups.length > 0;
    for (const { group, u } of end.groups) if ((await progress.status(group, u)).status !== 'completed') complete = false;
    if (complete) this.publish(job.namespaceId, 'MigrationCompleted', { toVersion: u0.toVersion, completedAt: unixSecs(this.d.clock) });
  }

  private async groupCounts(job: MigrationJob, groupId: string) {
    const found = this.upgraded(job.namespaceId, { ...job, groupIds: [groupId] })?.groups[0];
    return found ? this.d.progress.counts(found.group, found.u) : undefined;
  }

  /** Moves one context to `u.toAppKey` under its write lock, or records why it cannot. */
  private async migrate(contextId: string, u: GroupUpgradeRecord): Promise<void> {
    const { contexts, applications, progress, identity } = this.d;
    const { executor, records } = contexts;
    await executor.locks.run(contextId, true, async () => {
      const meta = await records.getMeta(contextId);
      if (!meta || meta.bundleBlobId === u.toAppKey) return;
      const from = await releaseOf(applications, meta);
      const fail = (reason: MigrationFailureReason, message: string, awaitsBundle?: string) =>
        records.store.batch([progress.failureOp(u.id, contextId, { reason, message, at: unixSecs(this.d.clock), ...(awaitsBundle ? { awaitsBundle } : {}) })]);
      try {
        const target = applications.installedRelease ? await applications.installedRelease(u.toAppKey) : null;
        if (!target) throw new MigrationRefusal('no_migration_path', `version ${u.toVersion} (bundle ${u.toAppKey}) is not installed on this node; installing it resumes the migration`, u.toAppKey);
        if (from && compareVersions(from.version, target.version) >= 0) {
          throw new MigrationRefusal('no_migration_path', `the context runs version ${from.version}, which is not older than ${target.version}`);
        }
        const next: ContextMeta = { ...meta, bundleBlobId: u.toAppKey };
        const clear = progress.clearFailureOp(u.id, contextId);
        const abi = applications.abiOfVersion ? await applications.abiOfVersion(u.toAppKey, meta.serviceName) : null;
        const method = migrationEntry(abi, from?.version);
        if (method === null || meta.rootHash === UNINITIALIZED_HASH) {
          await records.store.batch([records.meta.putOp(contextId, next), clear]);
        } else {
          const deviceId = (await contexts.contexts.executorKey(contextId)) ?? identity.publicKey;
          const input = new TextEncoder().encode(JSON.stringify({ fromVersion: from?.version ?? null, toVersion: target.version }));
          const result = await executor.run(next, { method, input, executorId: identity.accountId, deviceId, readOnly: false, signal: this.abort.signal });
          if (!result.ok) throw new MigrationRefusal(this.abort.signal.aborted ? 'check_aborted' : 'apply_failed', `migration ${method} failed: ${result.message}`);
          await executor.commit(next, result, deviceId, [clear]);
        }
        this.d.bus.publish({ type: 'context', contextId, kind: 'AppVersionChanged', data: { fromVersion: from?.version, toVersion: target.version } });
      } catch (err) {
        if (err instanceof MigrationRefusal) return fail(err.reason, err.message, err.awaitsBundle);
        if (err instanceof HearthError) return fail('no_migration_path', err.message);
        throw err;
      }
    });
  }

  private publish(namespaceId: string, kind: string, data: Record<string, unknown>): void {
    this.d.bus.publish({ type: 'group', namespaceId, groupId: namespaceId, kind, data });
  }
}
