/**
 * Group upgrade and migration steps (merobox `steps/group_upgrade.py`): start an upgrade (or a
 * namespace cascade), read and retry it, read and abort a migration, and the two polling
 * assertions `assert_migration_complete` / `assert_cascade_complete`.
 *
 * merobox does not hand the node's status bodies to `outputs:` as they are: it rolls a cascade
 * status up into `{total, completed, failed, pending, all_completed, groups}` and flattens a
 * migration status into `{target_version, expected_members, total, migrated, in_progress,
 * unknown, failed, all_migrated, members_pending_signature, members}`. The same shapes are made
 * here, so a workflow's `outputs:` read the same names on hearth.
 */
import type { CascadeStatusEntry, MigrationStatus } from '../../../client/index.ts';
import { clientOf, sleep, str, StepFailure, type Handler } from '../context.ts';

const seconds = (v: unknown, fallback: number) => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : fallback);

export interface CascadeSummary {
  total: number;
  completed: number;
  failed: number;
  pending: number;
  all_completed: boolean;
  groups: CascadeStatusEntry[];
}

/**
 * merobox's cascade roll-up. hearth has no `failed` upgrade status (a context that fails keeps the
 * upgrade `in_progress` until it is retried or aborted); an `aborted` group can never complete, so
 * it counts as failed — the polling assertion then stops at once instead of running to its timeout.
 */
export function cascadeSummary(groups: CascadeStatusEntry[]): CascadeSummary {
  const status = (g: CascadeStatusEntry) => String(g.upgrade?.status ?? '').toLowerCase();
  const completed = groups.filter((g) => status(g) === 'completed').length;
  const failed = groups.filter((g) => status(g) === 'failed' || status(g) === 'aborted').length;
  // an empty subtree is never complete: there is nothing to have completed yet (merobox)
  return { total: groups.length, completed, failed, pending: groups.length - completed - failed, all_completed: groups.length > 0 && completed === groups.length, groups };
}

export interface MigrationSummary {
  target_version: number;
  expected_members: number;
  total: number;
  migrated: number;
  in_progress: number;
  unknown: number;
  failed: number;
  all_migrated: boolean;
  members_pending_signature: number;
  members: { peer: string; state: string; migration_failed: string | null }[];
}

/** merobox's flattened migration status; a member in state `failed` counts even if the roll-up missed it. */
export function migrationSummary(s: MigrationStatus): MigrationSummary {
  const members = (s.members ?? []).map((m) => ({ peer: m.peer, state: String(m.state).toLowerCase(), migration_failed: m.report?.migrationFailed ?? null }));
  const failed = Math.max(s.rollup?.failed ?? 0, members.filter((m) => m.state === 'failed').length);
  return {
    target_version: s.targetVersion,
    expected_members: s.expectedMembers,
    total: s.rollup?.total ?? members.length,
    migrated: s.rollup?.migrated ?? 0,
    in_progress: s.rollup?.inProgress ?? 0,
    unknown: s.rollup?.unknown ?? 0,
    failed,
    all_migrated: s.rollup?.allMigrated === true && failed === 0,
    members_pending_signature: s.rollup?.membersPendingSignature ?? 0,
    members,
  };
}

const migrationStatus: Handler = async (s, ctx) => migrationSummary(await clientOf(ctx, s).upgrades.migrationStatus(str(s.namespace_id), { signal: ctx.signal }));
const cascadeStatus: Handler = async (s, ctx) => cascadeSummary(await clientOf(ctx, s).upgrades.cascadeStatus(str(s.namespace_id), { signal: ctx.signal }));

/**
 * Polls `read` every `poll_interval` s (default 2) until `done`, within `timeout_seconds` (default
 * 30), as merobox does: a read that fails is retried (the node may still be syncing), a status
 * that can no longer complete (`failed` > 0) ends the wait at once.
 */
function poll<T extends { failed: number; total: number }>(read: Handler, done: (r: T) => boolean, what: string, counted: string): Handler {
  return async (s, ctx) => {
    const timeout = seconds(s.timeout_seconds, 30);
    const deadline = Date.now() + timeout * 1000;
    let last: T | undefined;
    let lastError = '';
    for (let attempt = 1; ; attempt++) {
      try {
        last = (await read(s, ctx)) as T;
        if (done(last)) return last;
        if (last.failed > 0) throw new StepFailure(`${what}: ${last.failed} of ${last.total} ${counted} failed after ${attempt} poll(s); last status: ${JSON.stringify(last)}`);
      } catch (err) {
        if (err instanceof StepFailure || ctx.signal.aborted) throw err;
        lastError = (err as Error).message;
      }
      const remaining = deadline - Date.now();
      if (remaining <= 0) {
        const detail = last ? `last status: ${JSON.stringify(last)}` : `no status read succeeded (${lastError})`;
        throw new StepFailure(`${what} did not complete within ${timeout} s (${attempt} poll(s)); ${detail}`);
      }
      await sleep(Math.min(seconds(s.poll_interval, 2) * 1000, remaining), ctx.signal);
    }
  };
}

export const UPGRADE_STEPS: Record<string, Handler> = {
  upgrade_group: (s, ctx) => clientOf(ctx, s).upgrades.upgrade(str(s.group_id), { targetApplicationId: str(s.target_application_id), cascade: s.cascade === true }),
  cascade_namespace_application: (s, ctx) => clientOf(ctx, s).upgrades.upgrade(str(s.namespace_id), { targetApplicationId: str(s.target_application_id), cascade: true }),
  // merobox exports the status's own fields (`status`, …); `upgrade` holds it whole, null when none
  get_group_upgrade_status: async (s, ctx) => {
    const upgrade = await clientOf(ctx, s).upgrades.status(str(s.group_id));
    return { ...upgrade, upgrade };
  },
  retry_group_upgrade: (s, ctx) => clientOf(ctx, s).upgrades.retry(str(s.group_id)),
  get_migration_status: migrationStatus,
  get_cascade_status: cascadeStatus,
  abort_migration: (s, ctx) => clientOf(ctx, s).upgrades.abort(str(s.namespace_id)),
  assert_migration_complete: poll<MigrationSummary>(migrationStatus, (r) => r.all_migrated, 'the migration', 'members'),
  assert_cascade_complete: poll<CascadeSummary>(cascadeStatus, (r) => r.all_completed, 'the cascade', 'groups'),
};
