/**
 * Request and response schemas of the upgrade and migration routes (admin-wire-b §7). The
 * reference closes UpgradeGroupRequest (`deny_unknown_fields`); hearth accepts and ignores what
 * older clients add (reference README rule 3) and reads one extension, `version`.
 */
import { Type } from 'typebox';
import { Data, Hex32 } from '../http/response-schemas.ts';

export const UpgradeGroupRequest = Type.Object({
  targetApplicationId: Type.String({ description: 'the group’s own application: an upgrade changes its version, never the application' }),
  cascade: Type.Optional(Type.Boolean({ description: 'also every descendant group running the same application (one op)' })),
  forceCodeOnly: Type.Optional(Type.Boolean({ description: 'proceed although the target embeds no ABI' })),
  version: Type.Optional(Type.String({ description: 'hearth: the installed version to move to (default: the newest installed)' })),
});

const nullableCount = (description: string) => Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], { description: `${description}; null once completed` });
const UpgradeState = Type.Union([Type.Literal('in_progress'), Type.Literal('completed'), Type.Literal('aborted')]);
const counters = {
  localContextsTotal: nullableCount('this node’s contexts in the group'),
  localContextsSwapped: nullableCount('moved to the target version'),
  localContextsFailed: nullableCount('whose migration failed (they still run the previous version)'),
};

export const GroupUpgradeStatus = Type.Object({
  fromVersion: Type.String(),
  toVersion: Type.String(),
  initiatedAt: Type.Integer({ minimum: 0, description: 'unix seconds' }),
  initiatedBy: Hex32('the signing key of the node that published the upgrade'),
  status: UpgradeState,
  ...counters,
  completedAt: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], { description: 'unix seconds this node finished, or null' }),
});

export const UpgradeAnswer = Data(Type.Object({ groupId: Hex32(), status: UpgradeState, ...counters }));
export const UpgradeStatusAnswer = Data(Type.Union([GroupUpgradeStatus, Type.Null()]));
export const CascadeStatusAnswer = Data(
  Type.Array(Type.Object({ groupId: Hex32(), upgrade: GroupUpgradeStatus, cascadeHlc: Type.Optional(Type.String({ description: 'opaque fence of a cascade upgrade' })) })),
);

const MemberState = Type.Union([Type.Literal('migrated'), Type.Literal('in_progress'), Type.Literal('unknown'), Type.Literal('failed')]);

/** MigrationStatus: flat, as the reference answers it. */
export const MigrationStatusAnswer = Type.Object({
  targetVersion: Type.Integer({ minimum: 0, description: 'the target ABI’s state_version' }),
  expectedMembers: Type.Integer({ minimum: 0 }),
  cohortPinnedAtHlc: Type.Optional(Type.String()),
  fleetCompletedAt: Type.Optional(Type.Integer({ minimum: 0 })),
  rollup: Type.Object({
    migrated: Type.Integer({ minimum: 0 }),
    inProgress: Type.Integer({ minimum: 0 }),
    unknown: Type.Integer({ minimum: 0 }),
    failed: Type.Integer({ minimum: 0 }),
    total: Type.Integer({ minimum: 0 }),
    allMigrated: Type.Boolean(),
    membersPendingSignature: Type.Integer({ minimum: 0 }),
  }),
  members: Type.Array(
    Type.Object({
      peer: Hex32('the reporting device key'),
      account: Hex32(),
      state: MemberState,
      report: Type.Optional(
        Type.Object({
          schemaVersion: Type.Integer({ minimum: 0 }),
          residueAuto: Type.Integer({ minimum: 0 }),
          residueIdentity: Type.Integer({ minimum: 0 }),
          syncedUpToHlc: Type.Integer({ minimum: 0 }),
          reportedAt: Type.Integer({ minimum: 0 }),
          authoredRemaining: Type.Integer({ minimum: 0 }),
          migrationFailed: Type.Optional(Type.Union([Type.Literal('check_aborted'), Type.Literal('apply_failed'), Type.Literal('no_migration_path')])),
        }),
      ),
    }),
  ),
});

/** Flat, as the reference answers it. */
export const AbortAnswer = Type.Object({ namespaceId: Hex32(), aborted: Type.Boolean({ description: 'false: nothing was pending (idempotent)' }) });
