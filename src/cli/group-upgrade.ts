/**
 * `hearth group upgrade | upgrade-status | upgrade-retry | migration-status | cascade-status |
 * migration-abort | signing-key` (issue #15; the intent commands are in intents.ts) over the upgrade, migration and signing-key routes
 * (admin spec "Sync, upgrades and migration"; docs/governance.md "Upgrades and migrations").
 *
 * `upgrade` and `upgrade-retry` wait for this node's contexts to settle and show a progress bar
 * (contexts moved of all) unless `--no-wait`; they exit 1 when a context failed to migrate, naming
 * the next step. The signing-key secret is read from a file or stdin, never from the command line,
 * where it would reach the process list and shell history.
 */
import type { Command } from 'commander';
import type { GroupUpgradeStatus, UpgradeGroupResult } from '../client/index.ts';
import { HearthError } from '../errors.ts';
import { connectOptions, withCli, type Cli, type ConnectOpts } from './connect.ts';
import { UsageError } from './exit.ts';
import { idArg } from './group-args.ts';
import { Progress } from './progress.ts';
import { readSecretFrom } from './prompt.ts';
import { registerGroupIntentCommands } from './intents.ts';
import { positiveInt } from './connect.ts';

const GROUP = 'group id';
const NAMESPACE = 'namespace id';
const POLL_MS = 200;

interface WaitOpts extends ConnectOpts {
  wait?: boolean;
  waitTimeout?: number;
}

function renderStatus(s: GroupUpgradeStatus | UpgradeGroupResult | null): string {
  if (!s) return 'no upgrade';
  const versions = 'fromVersion' in s ? `${s.fromVersion} → ${s.toVersion}: ` : '';
  if (s.localContextsTotal === null) return `${versions}${s.status}`;
  return `${versions}${s.status}, ${s.localContextsSwapped}/${s.localContextsTotal} contexts moved, ${s.localContextsFailed} failed`;
}

/**
 * Polls the group's status until its contexts here have all moved or failed (or the upgrade was
 * aborted), drawing the bar; answers the last status. The deadline ends the wait, not the upgrade.
 */
async function waitForUpgrade(cli: Cli, groupId: string, o: WaitOpts): Promise<GroupUpgradeStatus | null> {
  const progress = new Progress(`upgrading ${groupId.slice(0, 12)}…`, { json: cli.out.json, format: (done, total) => `${done}/${total ?? '?'} contexts` });
  const deadline = Date.now() + (o.waitTimeout ?? 600) * 1000;
  for (;;) {
    const s = await cli.client.upgrades.status(groupId, { signal: cli.signal });
    if (!s || s.status !== 'in_progress') {
      progress.done(s?.status ?? 'no upgrade');
      return s;
    }
    const moved = s.localContextsSwapped ?? 0;
    const failed = s.localContextsFailed ?? 0;
    progress.update(moved + failed, s.localContextsTotal ?? undefined);
    if (moved + failed === s.localContextsTotal) {
      progress.done(`${failed} of ${s.localContextsTotal} failed`);
      return s;
    }
    if (Date.now() > deadline) throw new HearthError('unavailable', `still migrating after ${o.waitTimeout ?? 600} s; follow it with: hearth group upgrade-status ${groupId}`);
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

/** Prints the outcome; a failed context makes the command exit 1 with what to do next. */
function finish(cli: Cli, groupId: string, s: GroupUpgradeStatus | null): void {
  cli.out.result({ groupId, upgrade: s }, () => renderStatus(s));
  if (s?.status === 'in_progress' && (s.localContextsFailed ?? 0) > 0) {
    throw new HearthError(
      'conflict',
      `${s.localContextsFailed} context(s) failed to migrate and still run ${s.fromVersion}; fix them and run: hearth group upgrade-retry ${groupId} (or abort: hearth group migration-abort <namespace>)`,
    );
  }
}

const waitOptions = (cmd: Command) =>
  cmd.option('--no-wait', 'answer as soon as the node accepted it').option('--wait-timeout <seconds>', 'how long to wait for the migration (default 600)', positiveInt('seconds'));

export function registerGroupSurfaceCommands(group: Command): void {
  registerGroupIntentCommands(group);

  connectOptions(
    waitOptions(
      group
        .command('upgrade')
        .description('move a group (--cascade: and its subgroups) to a newer installed version of its application, running its migration')
        .argument('<group>', GROUP, idArg(GROUP))
        .option('--version <version>', 'the installed version to move to (default: the newest installed)')
        .option('--cascade', 'also every subgroup running the same application')
        .option('--force-code-only', 'upgrade even when the target embeds no ABI'),
    ),
  ).action(
    withCli<WaitOpts & { version?: string; cascade?: boolean; forceCodeOnly?: boolean }>(async (cli, [groupId], o) => {
      const { targetApplicationId } = await cli.client.groups.info(groupId, { signal: cli.signal });
      const started = await cli.client.upgrades.upgrade(
        groupId,
        { targetApplicationId, ...(o.version ? { version: o.version } : {}), ...(o.cascade ? { cascade: true } : {}), ...(o.forceCodeOnly ? { forceCodeOnly: true } : {}) },
        { signal: cli.signal },
      );
      if (o.wait === false) return cli.out.result(started, () => renderStatus(started));
      finish(cli, groupId, await waitForUpgrade(cli, groupId, o));
    }),
  );

  connectOptions(group.command('upgrade-status').description("the group's latest upgrade as this node sees it").argument('<group>', GROUP, idArg(GROUP))).action(
    withCli(async (cli, [groupId]) => {
      const s = await cli.client.upgrades.status(groupId, { signal: cli.signal });
      cli.out.result(s, () => renderStatus(s));
    }),
  );

  connectOptions(waitOptions(group.command('upgrade-retry').description("migrate this node's failed contexts of the group again").argument('<group>', GROUP, idArg(GROUP)))).action(
    withCli<WaitOpts>(async (cli, [groupId], o) => {
      const started = await cli.client.upgrades.retry(groupId, { signal: cli.signal });
      if (o.wait === false) return cli.out.result(started, () => renderStatus(started));
      finish(cli, groupId, await waitForUpgrade(cli, groupId, o));
    }),
  );

  connectOptions(group.command('migration-status').description("a namespace's migration across its members").argument('<namespace>', NAMESPACE, idArg(NAMESPACE))).action(
    withCli(async (cli, [ns]) => {
      const s = await cli.client.upgrades.migrationStatus(ns, { signal: cli.signal });
      cli.out.result(s, () =>
        [
          `target state version: ${s.targetVersion}`,
          `members:              ${s.rollup.migrated} migrated, ${s.rollup.inProgress} in progress, ${s.rollup.failed} failed, ${s.rollup.unknown} unknown (of ${s.rollup.total})`,
          ...s.members.map((m) => `  ${m.account.slice(0, 12)}… ${m.peer.slice(0, 12)}… ${m.state}${m.report?.migrationFailed ? ` (${m.report.migrationFailed})` : ''}`),
        ].join('\n'),
      );
    }),
  );

  connectOptions(group.command('cascade-status').description('every upgraded group of a namespace').argument('<namespace>', NAMESPACE, idArg(NAMESPACE))).action(
    withCli(async (cli, [ns]) => {
      const rows = await cli.client.upgrades.cascadeStatus(ns, { signal: cli.signal });
      cli.out.table(
        rows,
        [
          { header: 'group', value: (r) => r.groupId },
          { header: 'upgrade', value: (r) => renderStatus(r.upgrade) },
        ],
        'no group of this namespace was upgraded',
      );
    }),
  );

  connectOptions(group.command('migration-abort').description("stop a namespace's pending migration: contexts not yet moved stay on their version").argument('<namespace>', NAMESPACE, idArg(NAMESPACE)), {
    destructive: true,
  }).action(
    withCli(async (cli, [ns]) => {
      await cli.confirm(`Abort the pending migration of namespace ${ns}?`);
      const r = await cli.client.upgrades.abort(ns, { signal: cli.signal });
      cli.out.result(r, () => (r.aborted ? `aborted the migration of ${ns}` : `nothing to abort in ${ns}`));
    }),
  );

  connectOptions(
    group
      .command('signing-key')
      .description("give the node a signing key of its own account for a group (its secret, from a file or stdin)")
      .argument('<group>', GROUP, idArg(GROUP))
      .option('--key-file <file>', 'the Ed25519 secret key, 64 hex, in a file')
      .option('--key-stdin', 'read the secret key from stdin'),
  ).action(
    withCli<ConnectOpts & { keyFile?: string; keyStdin?: boolean }>(async (cli, [groupId], o) => {
      if (!o.keyFile && !o.keyStdin) throw new UsageError('pass the secret key with --key-file <file> or --key-stdin');
      const signingKey = (await readSecretFrom({ label: 'signing key', file: o.keyFile, stdin: o.keyStdin })).trim();
      const r = await cli.client.groups.registerSigningKey(groupId, { signingKey }, { signal: cli.signal });
      cli.out.result({ groupId, ...r }, () => `registered signing key ${r.publicKey} for group ${groupId}`);
    }),
  );
}
