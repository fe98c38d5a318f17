/**
 * `hearth group members …` (issue #6, product.md B4 `group members`): list, add, remove,
 * set-role, set-auto-follow, get-capabilities, set-capabilities, check-access over the admin API's member routes
 * (admin-wire-b §4.6–§4.9, §6.1). Members are accounts (64 hex). Capabilities are set as a whole
 * mask, as the reference CLI does: name every capability the member should hold, or `--mask`.
 */
import { Option, type Command } from 'commander';
import { CAPABILITIES } from '../client/index.ts';
import { connectOptions, withCli, type ConnectOpts } from './connect.ts';
import { capabilityNames, capabilityOptions, describeMask, idArg, maskFromOptions, roleArg, switchArg } from './group-args.ts';

const GROUP = 'group id';
const ACCOUNT = 'account id';
const CAPABILITY_LIST = Object.keys(CAPABILITIES);

export function registerGroupMemberCommands(group: Command): void {
  const members = group.command('members').description("a group's members, their roles and capabilities");

  connectOptions(members.command('list').alias('ls').description('list the members of a group (direct and inherited)').argument('<group>', GROUP, idArg(GROUP))).action(
    withCli(async (cli, [id]) => {
      const list = await cli.client.groups.members(id, { signal: cli.signal });
      cli.out.table(
        list,
        [
          { header: 'account', value: (m) => m.identity },
          { header: 'role', value: (m) => m.role },
          { header: 'name', value: (m) => m.name },
        ],
        `group ${id} has no members`,
      );
    }),
  );

  connectOptions(
    members
      .command('add')
      .description('add an account to a group with a role (default member)')
      .argument('<group>', GROUP, idArg(GROUP))
      .argument('<account>', ACCOUNT, idArg(ACCOUNT))
      .argument('[role]', 'admin, member or read-only', roleArg, 'Member'),
  ).action(
    withCli(async (cli, [id, account, role]) => {
      const r = roleArg(role);
      await cli.client.groups.addMembers(id, [{ identity: account, role: r }], { signal: cli.signal });
      cli.out.result({ groupId: id, account, role: r, added: true }, () => `added ${account} to group ${id} as ${r}`);
    }),
  );

  connectOptions(
    members
      .command('remove')
      .alias('rm')
      .description('remove accounts from a group')
      .argument('<group>', GROUP, idArg(GROUP))
      .argument('<accounts...>', 'account ids (64 hex each)', (value: string, previous: string[] = []) => [...previous, idArg(ACCOUNT)(value)]),
    { destructive: true },
  ).action(
    withCli(async (cli, args) => {
      const [id, accounts] = args as unknown as [string, string[]];
      await cli.confirm(`Remove ${accounts.length} member${accounts.length === 1 ? '' : 's'} from group ${id}?`);
      await cli.client.groups.removeMembers(id, accounts, { signal: cli.signal });
      cli.out.result({ groupId: id, removed: accounts }, () => accounts.map((a) => `removed ${a} from group ${id}`).join('\n'));
    }),
  );

  connectOptions(
    members
      .command('set-role')
      .description("change a member's role (admins only)")
      .argument('<group>', GROUP, idArg(GROUP))
      .argument('<account>', ACCOUNT, idArg(ACCOUNT))
      .argument('<role>', 'admin, member or read-only', roleArg),
  ).action(
    withCli(async (cli, [id, account, role]) => {
      await cli.client.groups.setMemberRole(id, account, role as ReturnType<typeof roleArg>, { signal: cli.signal });
      cli.out.result({ groupId: id, account, role }, () => `${account} is now ${role} in group ${id}`);
    }),
  );

  connectOptions(
    members
      .command('set-auto-follow')
      .description("whether the member's node joins the group's contexts by itself (the member itself or an admin; docs/sync.md \"Auto-follow\")")
      .argument('<group>', GROUP, idArg(GROUP))
      .argument('<account>', ACCOUNT, idArg(ACCOUNT))
      .addOption(new Option('--contexts <on/off>', "join the group's contexts automatically").argParser(switchArg).default(true, 'on'))
      .addOption(new Option('--subgroups <on/off>', 'also join the contexts of open subgroups below it').argParser(switchArg).default(false, 'off')),
  ).action(
    withCli<ConnectOpts & { contexts: boolean; subgroups: boolean }>(async (cli, [id, account], o) => {
      const follow = { autoFollowContexts: o.contexts, autoFollowSubgroups: o.subgroups };
      await cli.client.groups.setAutoFollow(id, account, follow, { signal: cli.signal });
      const word = (b: boolean) => (b ? 'on' : 'off');
      cli.out.result({ groupId: id, account, ...follow }, () => `auto-follow of ${account} in group ${id}: contexts ${word(o.contexts)}, subgroups ${word(o.subgroups)}`);
    }),
  );

  connectOptions(
    members
      .command('get-capabilities')
      .alias('get-caps')
      .description("show a member's capability mask")
      .argument('<group>', GROUP, idArg(GROUP))
      .argument('<account>', ACCOUNT, idArg(ACCOUNT)),
  ).action(
    withCli(async (cli, [id, account]) => {
      const capabilities = await cli.client.settings.memberCapabilities(id, account, { signal: cli.signal });
      cli.out.result({ groupId: id, account, capabilities, names: capabilityNames(capabilities) }, () => `capabilities: ${describeMask(capabilities)}`);
    }),
  );

  connectOptions(
    members
      .command('check-access')
      .description("an account's role and capabilities in a group, or that it is not a member")
      .argument('<group>', GROUP, idArg(GROUP))
      .argument('<account>', ACCOUNT, idArg(ACCOUNT)),
  ).action(
    withCli(async (cli, [id, account]) => {
      const member = (await cli.client.groups.members(id, { signal: cli.signal })).find((m) => m.identity === account);
      const capabilities = member ? await cli.client.settings.memberCapabilities(id, account, { signal: cli.signal }) : 0;
      const names = capabilityNames(capabilities);
      cli.out.result({ groupId: id, account, member: Boolean(member), role: member?.role ?? null, capabilities, names }, () =>
        member
          ? [`role: ${member.role}`, ...CAPABILITY_LIST.map((n) => `${n.padEnd(24)} ${names.includes(n) ? 'yes' : 'no'}`)].join('\n')
          : `${account} is not a member of group ${id}`,
      );
    }),
  );

  connectOptions(
    capabilityOptions(
      members
        .command('set-capabilities')
        .alias('set-caps')
        .description("set a member's whole capability mask (admins only)")
        .argument('<group>', GROUP, idArg(GROUP))
        .argument('<account>', ACCOUNT, idArg(ACCOUNT)),
    ),
  ).action(
    withCli<ConnectOpts & Record<string, unknown>>(async (cli, [id, account], o) => {
      const mask = maskFromOptions(o);
      await cli.client.settings.setMemberCapabilities(id, account, mask, { signal: cli.signal });
      cli.out.result({ groupId: id, account, capabilities: mask, names: capabilityNames(mask) }, () => `capabilities of ${account} in group ${id}: ${describeMask(mask)}`);
    }),
  );
}
