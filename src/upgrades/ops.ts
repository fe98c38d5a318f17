/**
 * The governance ops of group upgrades (domain.md §4.6: `TargetApplicationSet`, or with cascade one
 * atomic `CascadeUpgrade` over every matching descendant group; admin-wire-b §7). Appliers are pure
 * functions of (state, op), so every node that replays an op reaches the same state: the author's
 * node resolved versions and bundles before publishing, and each node migrates its own contexts
 * after the op applied (migrator.ts), never inside an applier.
 *
 * - `group.upgrade.set` `{groupIds, targetApplicationId, fromVersion, toVersion, fromAppKey, toAppKey,
 *   toStateVersion, cascade}`: the asked group is `op.groupId` and `groupIds[0]`; the others are
 *   descendants running the same application. The author needs `MANAGE_APPLICATION` on the asked
 *   group (admins hold it). Each group pins `toAppKey` and records the upgrade.
 * - `group.upgrade.aborted` `{}` on the namespace root: every group of the namespace whose upgrade
 *   is not aborted goes back to its `fromAppKey` (admin of the root, or `MANAGE_APPLICATION` there).
 *   Contexts that already migrated stay on the new version (the reference's abort "does not recall
 *   an already-committed v2 context").
 */
import { badRequest, conflict } from '../errors.ts';
import { type ApplierRegistry, type ApplyContext, groupOf, requireCapability, subtree } from '../governance/index.ts';
import { UNRESOLVED_APP_KEY, UPGRADE_ABORTED, UPGRADE_APPLIED, UPGRADE_OPS, type GroupUpgradeRecord } from './types.ts';

export interface UpgradeOpBody {
  groupIds: string[];
  targetApplicationId: string;
  fromVersion: string;
  toVersion: string;
  fromAppKey: string;
  toAppKey: string;
  toStateVersion: number;
  cascade: boolean;
}

const HEX64 = /^[0-9a-f]{64}$/;
const isVersion = (v: unknown): v is string => typeof v === 'string' && v.length > 0 && v.length <= 64;

/** Shape checks first: an op from a peer is hostile input (400, never a crash). */
export function parseUpgradeBody(raw: Record<string, unknown>): UpgradeOpBody {
  const b = raw as Partial<UpgradeOpBody>;
  if (!Array.isArray(b.groupIds) || b.groupIds.length === 0 || !b.groupIds.every((g) => typeof g === 'string' && HEX64.test(g))) {
    throw badRequest('upgrade op: groupIds must be a non-empty list of group ids');
  }
  for (const key of ['targetApplicationId', 'fromAppKey', 'toAppKey'] as const) {
    if (typeof b[key] !== 'string' || !HEX64.test(b[key])) throw badRequest(`upgrade op: ${key} must be 64 hex characters`);
  }
  if (!isVersion(b.fromVersion) || !isVersion(b.toVersion)) throw badRequest('upgrade op: fromVersion and toVersion must be versions');
  if (typeof b.toStateVersion !== 'number' || !Number.isInteger(b.toStateVersion) || b.toStateVersion < 0 || b.toStateVersion > 0xffffffff) {
    throw badRequest('upgrade op: toStateVersion must be a u32');
  }
  if (typeof b.cascade !== 'boolean') throw badRequest('upgrade op: cascade must be a boolean');
  return b as UpgradeOpBody;
}

function upgradeSet({ ns, op, emit }: ApplyContext): void {
  const body = parseUpgradeBody(op.body);
  if (body.groupIds[0] !== op.groupId) throw badRequest('upgrade op: groupIds must start with the group the op is published on');
  const asked = groupOf(ns, op.groupId);
  requireCapability(ns, asked, op.account, 'MANAGE_APPLICATION');
  if (asked.targetApplicationId !== body.targetApplicationId) {
    throw conflict(`group '${asked.id}' runs application ${asked.targetApplicationId}; an upgrade keeps the application (targetApplicationId ${body.targetApplicationId} is another)`);
  }
  const below = new Set(subtree(ns, asked.id).map((g) => g.id));
  if (new Set(body.groupIds).size !== body.groupIds.length) throw badRequest('upgrade op: groupIds repeat a group');
  const groups = body.groupIds.map((id) => {
    if (!below.has(id)) throw badRequest(`upgrade op: group '${id}' is not '${asked.id}' or below it`);
    const g = groupOf(ns, id);
    if (g.targetApplicationId !== body.targetApplicationId) throw badRequest(`upgrade op: group '${id}' runs another application`);
    if (g.appKey === body.toAppKey) throw conflict(`group '${id}' already targets version ${body.toVersion} (bundle ${body.toAppKey})`);
    return g;
  });
  for (const g of groups) {
    const record: GroupUpgradeRecord = {
      id: op.id,
      requestedOn: asked.id,
      cascade: body.cascade,
      targetApplicationId: body.targetApplicationId,
      fromVersion: body.fromVersion,
      toVersion: body.toVersion,
      fromAppKey: g === asked ? body.fromAppKey : g.appKey === UNRESOLVED_APP_KEY ? body.fromAppKey : g.appKey,
      toAppKey: body.toAppKey,
      toStateVersion: body.toStateVersion,
      initiatedAt: Math.floor(op.timestampMs / 1000),
      initiatedBy: op.signer,
      fence: `${op.timestampMs}-${op.id.slice(0, 16)}`,
    };
    g.upgrade = record;
    g.appKey = body.toAppKey;
  }
  emit(ns.id, UPGRADE_APPLIED, { upgradeId: op.id, groupIds: body.groupIds });
}

function upgradeAborted({ ns, op, emit }: ApplyContext): void {
  if (op.groupId !== ns.id) throw badRequest('abort op: publish it on the namespace root');
  requireCapability(ns, groupOf(ns, ns.id), op.account, 'MANAGE_APPLICATION');
  const active = Object.values(ns.groups).filter((g) => g.upgrade && !g.upgrade.aborted);
  if (active.length === 0) throw conflict(`namespace '${ns.id}' has no upgrade to abort`);
  for (const g of active) {
    const u = g.upgrade!;
    u.aborted = { at: Math.floor(op.timestampMs / 1000), by: op.account };
    g.appKey = u.fromAppKey;
  }
  emit(ns.id, UPGRADE_ABORTED, { groupIds: active.map((g) => g.id) });
}

export function registerUpgradeOps(registry: ApplierRegistry): void {
  registry.register(UPGRADE_OPS.set, upgradeSet);
  registry.register(UPGRADE_OPS.aborted, upgradeAborted);
}
