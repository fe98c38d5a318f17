/**
 * Group upgrade and migration steps (merobox `steps/group_upgrade.py`): start an upgrade (or a
 * namespace cascade), read and retry it, read and abort a migration, and the two polling
 * assertions `assert_migration_complete` / `assert_cascade_complete`.
 */
import { clientOf, sleep, str, StepFailure, type Handler } from '../context.ts';

const seconds = (v: unknown, fallback: number) => (typeof v === 'number' && v > 0 ? v : fallback);

/** Polls `read` until `done` holds or `timeout_seconds` (default 30) pass. */
function poll<T>(read: Handler, done: (r: T) => boolean, what: string): Handler {
  return async (s, ctx) => {
    const deadline = Date.now() + seconds(s.timeout_seconds, 30) * 1000;
    for (;;) {
      const r = (await read(s, ctx)) as T;
      if (done(r)) return r;
      if (Date.now() >= deadline) throw new StepFailure(`${what} did not complete within ${seconds(s.timeout_seconds, 30)} s; last status: ${JSON.stringify(r)}`);
      await sleep(seconds(s.poll_interval, 2) * 1000, ctx.signal);
    }
  };
}

const migrationStatus: Handler = (s, ctx) => clientOf(ctx, s).upgrades.migrationStatus(str(s.namespace_id));
const cascadeStatus: Handler = async (s, ctx) => ({ groups: await clientOf(ctx, s).upgrades.cascadeStatus(str(s.namespace_id)) });

export const UPGRADE_STEPS: Record<string, Handler> = {
  upgrade_group: (s, ctx) => clientOf(ctx, s).upgrades.upgrade(str(s.group_id), { targetApplicationId: str(s.target_application_id), cascade: s.cascade === true }),
  cascade_namespace_application: (s, ctx) => clientOf(ctx, s).upgrades.upgrade(str(s.namespace_id), { targetApplicationId: str(s.target_application_id), cascade: true }),
  get_group_upgrade_status: async (s, ctx) => ({ upgrade: await clientOf(ctx, s).upgrades.status(str(s.group_id)) }),
  retry_group_upgrade: (s, ctx) => clientOf(ctx, s).upgrades.retry(str(s.group_id)),
  get_migration_status: migrationStatus,
  get_cascade_status: cascadeStatus,
  abort_migration: (s, ctx) => clientOf(ctx, s).upgrades.abort(str(s.namespace_id)),
  assert_migration_complete: poll<{ rollup: { allMigrated: boolean } }>(migrationStatus, (r) => r.rollup.allMigrated, 'the migration'),
  assert_cascade_complete: poll<{ groups: { upgrade: { status: string } }[] }>(cascadeStatus, (r) => r.groups.every((g) => g.upgrade.status === 'completed'), 'the cascade'),
};
