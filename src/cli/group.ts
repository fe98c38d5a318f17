/**
 * `hearth group` (issue #6, product.md B4 `group`): create, list, get, delete, invite, revoke-invite, join, leave, subgroups,
 * reparent, contexts {list | detach}, settings {get | set-default-capabilities |
 * set-subgroup-visibility} over the admin API's "Groups" and "Capabilities, settings and metadata"
 * routes (admin-wire-b §4, §6). Members live in group-members.ts, metadata in group-metadata.ts.
 * Delete, leave and detach confirm unless `--yes`.
 */
import { dirname } from 'node:path';
import type { Command } from 'commander';
import type { GroupInfo } from '../client/index.ts';
import { connectOptions, withCli, type ConnectOpts } from './connect.ts';
import { capabilityOptions, describeMask, idArg, idList, maskFromOptions, pickInvitation, readInvitationArg, readJsonArg, secondsArg, visibilityArg } from './group-args.ts';
import { registerGroupMemberCommands } from './group-members.ts';
import { registerGroupMetadataCommands } from './group-metadata.ts';
import { registerGroupSurfaceCommands } from './group-upgrade.ts';
import { invitationFileOptions, printInvitation, type InvitationFileFlags } from './namespace.ts';
import { UsageError } from './exit.ts';

export const GROUP = 'group id';
const CONTEXT = 'context id';

function renderGroup(g: GroupInfo, name: string | undefined): string {
  return [
    `group:                ${g.groupId}`,
    `name:                 ${name ?? '-'}`,
    `namespace:            ${g.namespaceId}${g.namespaceId === g.groupId ? ' (this group is the root)' : ''}`,
    `application:          ${g.targetApplicationId}`,
    `app key:              ${g.appKey}`,
    `members:              ${g.memberCount}`,
    `contexts:             ${g.contextCount}`,
    `default capabilities: ${describeMask(Number(g.defaultCapabilities))}`,
    `subgroup visibility:  ${g.subgroupVisibility}`,
    `owner-op counter:     ${g.ownerOpCounter}`,
    ...(g.activeUpgrade ? [`active upgrade:       ${JSON.stringify(g.activeUpgrade)}`] : []),
  ].join('\n');
}

export function registerGroupCommands(program: Command): void {
  const group = program.command('group').description('groups: members, roles, capabilities, settings, metadata, invitations');

  connectOptions(
    group
      .command('create')
      .description('create a subgroup below a group (a namespace is created with "hearth namespace create")')
      .requiredOption('--parent <group>', 'the parent group or namespace id', idArg(GROUP))
      .option('--application <id>', "the application the group targets (default: the parent's)", idArg('application id'))
      .option('--name <text>', 'group name')
      .option('--visibility <open|restricted>', 'who may join without an invitation (default open)', visibilityArg),
  ).action(
    withCli<ConnectOpts & { parent: string; application?: string; name?: string; visibility?: 'open' | 'restricted' }>(async (cli, _args, o) => {
      const applicationId = o.application ?? (await cli.client.groups.info(o.parent, { signal: cli.signal })).targetApplicationId;
      const r = await cli.client.groups.create(
        { applicationId, parentGroupId: o.parent, name: o.name, visibility: o.visibility },
        { signal: cli.signal },
      );
      cli.out.result({ ...r, parentGroupId: o.parent }, () => `created group ${r.groupId}${o.name ? ` (${o.name})` : ''} below ${o.parent}`);
    }),
  );

  connectOptions(
    group.command('list').alias('ls').description('list every group of a namespace').argument('<namespace>', 'namespace id', idArg('namespace id')),
  ).action(
    withCli(async (cli, [ns]) => {
      const groups = await cli.client.namespaces.groups(ns, { signal: cli.signal });
      cli.out.table(
        groups,
        [
          { header: 'group', value: (g) => g.groupId },
          { header: 'name', value: (g) => g.name },
        ],
        `no groups below the root yet: hearth group create --parent ${ns} --name <name>`,
      );
    }),
  );

  connectOptions(group.command('get').description('show a group (GroupInfo)').argument('<group>', GROUP, idArg(GROUP))).action(
    withCli(async (cli, [id]) => {
      const opts = { signal: cli.signal };
      const g = await cli.client.groups.info(id, opts);
      // GroupInfo carries no name (spec): its metadata's, else the namespace's or its listing's
      const name =
        g.metadata?.name ??
        (g.namespaceId === g.groupId ? (await cli.client.namespaces.get(g.namespaceId, opts)).name : (await cli.client.namespaces.groups(g.namespaceId, opts)).find((s) => s.groupId === g.groupId)?.name) ??
        undefined;
      cli.out.result(g, () => renderGroup(g, name));
    }),
  );

  connectOptions(group.command('delete').alias('del').description('delete a subgroup and its whole subtree').argument('<group>', GROUP, idArg(GROUP)), {
    destructive: true,
  }).action(
    withCli(async (cli, [id]) => {
      await cli.confirm(`Delete group ${id}, its subgroups and their contexts?`);
      const r = await cli.client.groups.deleteGroup(id, { signal: cli.signal });
      cli.out.result({ groupId: id, ...r }, () => `deleted group ${id}`);
    }),
  );

  connectOptions(
    invitationFileOptions(
      group
        .command('invite')
        .description('create a signed invitation to the group (prints one inv1.… line that join takes; the JSON with --output json)')
        .argument('<group>', GROUP, idArg(GROUP))
        .option('--expires-in <seconds>', 'how long the invitation is valid (default and maximum 86400)', secondsArg)
        .option('--admitter <account>', 'account that may admit the joiner (repeatable; default: the admins)', idList('account id')),
    ),
  ).action(
    withCli<ConnectOpts & InvitationFileFlags & { expiresIn?: number; admitter?: string[] }>(async (cli, [id], o) => {
      const r = await cli.client.invitations.inviteToGroup(id, { expirationTimestamp: o.expiresIn, admitters: o.admitter }, { signal: cli.signal });
      await printInvitation(cli.out, r, 'hearth group join', o, { homeRoot: dirname(cli.profiles.dir), groupId: id });
    }),
  );

  connectOptions(
    group
      .command('revoke-invite')
      .description('revoke an invitation to the group: every member node refuses it from then on (hearth)')
      .argument('<group>', GROUP, idArg(GROUP))
      .argument('[invitation]', 'the invitation JSON, @file, or - for stdin')
      .option('--id <invitationId>', 'the invitation id (64 hex) instead of the invitation', idArg('invitation id'))
      .option('--group-of <id>', 'which invitation, when the JSON holds several (namespace invite --recursive)', idArg(GROUP)),
  ).action(
    withCli<ConnectOpts & { id?: string; groupOf?: string }>(async (cli, [id, source], o) => {
      if ((source === undefined) === (o.id === undefined)) throw new UsageError('give the invitation (JSON, @file or -) or --id <invitationId>, not both');
      const which = o.id !== undefined ? { invitationId: o.id } : { invitation: pickInvitation(await readJsonArg(source!, 'invitation'), o.groupOf ?? id) };
      const r = await cli.client.invitations.revoke(id, which, { signal: cli.signal });
      cli.out.result(r, () => `revoked invitation ${r.invitationId} to group ${r.groupId}`);
    }),
  );

  connectOptions(
    group
      .command('join')
      .description('join a group with an invitation from another node')
      .argument('<invitation>', 'the inv1.… line or the invitation JSON, @file, or - for stdin')
      .option('--group <id>', 'which group, when the JSON holds several invitations (namespace invite --recursive)', idArg(GROUP))
      .option('--name <text>', 'local name to give the group'),
  ).action(
    withCli<ConnectOpts & { group?: string; name?: string }>(async (cli, [source], o) => {
      const invitation = pickInvitation(await readInvitationArg(source), o.group);
      const r = await cli.client.invitations.joinGroup(invitation, o.name, { signal: cli.signal });
      cli.out.result(r, () => `joined group ${r.groupId}\naccount:         ${r.memberAccount}\nmember identity: ${r.memberIdentity}`);
    }),
  );

  connectOptions(group.command('leave').description("leave a group (this node's account)").argument('<group>', GROUP, idArg(GROUP)), { destructive: true }).action(
    withCli(async (cli, [id]) => {
      await cli.confirm(`Leave group ${id}?`);
      await cli.client.groups.leave(id, { signal: cli.signal });
      cli.out.result({ groupId: id, left: true }, () => `left group ${id}`);
    }),
  );

  connectOptions(group.command('subgroups').description('list the direct subgroups of a group').argument('<group>', GROUP, idArg(GROUP))).action(
    withCli(async (cli, [id]) => {
      const list = await cli.client.groups.subgroups(id, { signal: cli.signal });
      cli.out.table(
        list,
        [
          { header: 'group', value: (g) => g.groupId },
          { header: 'name', value: (g) => g.name },
        ],
        `group ${id} has no subgroups`,
      );
    }),
  );

  connectOptions(
    group
      .command('reparent')
      .description('move a subgroup below another group of the same namespace')
      .argument('<group>', GROUP, idArg(GROUP))
      .argument('<new-parent>', 'new parent group id', idArg('group id')),
  ).action(
    withCli(async (cli, [child, parent]) => {
      const reparented = await cli.client.groups.reparent(child, parent, { signal: cli.signal });
      cli.out.result({ groupId: child, newParentId: parent, reparented }, () =>
        reparented ? `moved group ${child} below ${parent}` : `group ${child} was not moved`,
      );
    }),
  );

  const contexts = group.command('contexts').description('contexts registered in a group');
  connectOptions(contexts.command('list').alias('ls').description('list the contexts registered in a group').argument('<group>', GROUP, idArg(GROUP))).action(
    withCli(async (cli, [id]) => {
      const list = await cli.client.groups.contexts(id, { signal: cli.signal });
      cli.out.table(
        list,
        [
          { header: 'context', value: (c) => c.contextId },
          { header: 'name', value: (c) => c.name },
        ],
        `no contexts in group ${id}`,
      );
    }),
  );

  connectOptions(
    contexts
      .command('detach')
      .description('remove a context from a group (admins only)')
      .argument('<group>', GROUP, idArg(GROUP))
      .argument('<context>', CONTEXT, idArg(CONTEXT)),
    { destructive: true },
  ).action(
    withCli(async (cli, [id, context]) => {
      await cli.confirm(`Detach context ${context} from group ${id}?`);
      await cli.client.groups.removeContext(id, context, { signal: cli.signal });
      cli.out.result({ groupId: id, contextId: context, detached: true }, () => `detached context ${context} from group ${id}`);
    }),
  );

  const settings = group.command('settings').description("a group's default capabilities and subgroup visibility");
  connectOptions(settings.command('get').description("show a group's settings").argument('<group>', GROUP, idArg(GROUP))).action(
    withCli(async (cli, [id]) => {
      const g = await cli.client.groups.info(id, { signal: cli.signal });
      const defaultCapabilities = Number(g.defaultCapabilities);
      cli.out.result({ groupId: id, defaultCapabilities, subgroupVisibility: g.subgroupVisibility }, () =>
        `default capabilities: ${describeMask(defaultCapabilities)}\nsubgroup visibility:  ${g.subgroupVisibility}`,
      );
    }),
  );

  connectOptions(
    capabilityOptions(
      settings
        .command('set-default-capabilities')
        .alias('set-default-caps')
        .description('set the capabilities new members get (the whole mask; admins only)')
        .argument('<group>', GROUP, idArg(GROUP)),
    ),
  ).action(
    withCli<ConnectOpts & Record<string, unknown>>(async (cli, [id], o) => {
      const mask = maskFromOptions(o);
      await cli.client.settings.setDefaultCapabilities(id, mask, { signal: cli.signal });
      cli.out.result({ groupId: id, defaultCapabilities: mask }, () => `default capabilities of group ${id}: ${describeMask(mask)}`);
    }),
  );

  connectOptions(
    settings
      .command('set-subgroup-visibility')
      .alias('set-subgroup-vis')
      .description('make a subgroup open (members of the parent may join) or restricted')
      .argument('<group>', GROUP, idArg(GROUP))
      .argument('<visibility>', 'open or restricted', visibilityArg),
  ).action(
    withCli(async (cli, [id, visibility]) => {
      await cli.client.settings.setSubgroupVisibility(id, visibility as 'open' | 'restricted', { signal: cli.signal });
      cli.out.result({ groupId: id, subgroupVisibility: visibility }, () => `group ${id} is now ${visibility}`);
    }),
  );

  registerGroupMemberCommands(group);
  registerGroupMetadataCommands(group);
  registerGroupSurfaceCommands(group);
}
