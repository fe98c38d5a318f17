/**
 * `hearth namespace` (alias `ns`; issue #6, product.md B4 `namespace`): create, list, get,
 * delete, invite, join, leave, groups, create-group — over the admin API's "Namespaces" routes
 * (admin-wire-b §2). Invitations print as JSON so they can be handed to `join` on another node
 * (`@file` or `-` for stdin). Delete and leave confirm unless `--yes`.
 */
import type { Command } from 'commander';
import type { InvitationResult, Namespace, RecursiveInvitationResult } from '../client/index.ts';
import { connectOptions, withCli, type ConnectOpts } from './connect.ts';
import { when, type Output } from './output.ts';
import { idArg, idList, pickInvitation, readJsonArg, secondsArg, visibilityArg } from './group-args.ts';

const NS = 'namespace id';

interface InviteFlags extends ConnectOpts {
  expiresIn?: number;
  recursive?: boolean;
  admitter?: string[];
}


function renderNamespace(n: Namespace): string {
  return [
    `namespace:    ${n.namespaceId}`,
    `name:         ${n.name ?? '-'}`,
    `application:  ${n.targetApplicationId}${n.appVersion ? ` (${n.appVersion})` : ''}`,
    `app key:      ${n.appKey}`,
    `created:      ${when(n.createdAt)}`,
    `members:      ${n.memberCount}`,
    `contexts:     ${n.contextCount}`,
    `subgroups:    ${n.subgroupCount}`,
    ...(n.founding ? [`founder:      ${n.founding.founderAccountId}`, `salt:         ${n.founding.salt}`] : []),
  ].join('\n');
}

/**
 * Prints an invitation: the SDK's answer with `--output json`; in human mode only what `join`
 * takes (the signed invitation, or the recursive list), pretty, so `> invitation.json` captures it
 * whole, and a how-to-join note on stderr.
 */
export function printInvitation(out: Output, result: InvitationResult | RecursiveInvitationResult, joinCommand: string): void {
  const list = 'invitations' in result ? result.invitations : undefined;
  out.result(result, () => JSON.stringify(list ? result : (result as InvitationResult).invitation, null, 2));
  if (out.json) return;
  const expires = (list ? list[0]?.invitation : (result as InvitationResult).invitation)?.invitation.expiration_timestamp;
  const what = list ? `${list.length} invitations` : 'invitation';
  process.stderr.write(`${what} valid until ${when(expires)}; on the joining node run: ${joinCommand} @<file with this JSON> (or - to read it from stdin)\n`);
}

export function registerNamespaceCommands(program: Command): void {
  const ns = program.command('namespace').alias('ns').description('namespaces: the root groups that hold members, subgroups and contexts');

  connectOptions(
    ns
      .command('create')
      .description('found a namespace for an application; this node becomes its owner')
      .requiredOption('--application <id>', 'application id (64 hex)', idArg('application id'))
      .option('--name <text>', 'display name')
      .option('--app-key <id>', 'bytecode (blob) id the namespace pins (default: chosen by the node)', idArg('app key')),
  ).action(
    withCli<ConnectOpts & { application: string; name?: string; appKey?: string }>(async (cli, _args, o) => {
      const r = await cli.client.namespaces.create({ applicationId: o.application, name: o.name, appKey: o.appKey }, { signal: cli.signal });
      cli.out.result(r, () => `created namespace ${r.namespaceId}${o.name ? ` (${o.name})` : ''}\nfounder: ${r.founding.founderAccountId}\nsalt:    ${r.founding.salt}`);
    }),
  );

  connectOptions(ns.command('list').alias('ls').description('list the namespaces this node takes part in')).action(
    withCli(async (cli) => {
      const list = await cli.client.namespaces.list({ signal: cli.signal });
      cli.out.table(
        list,
        [
          { header: 'namespace', value: (n) => n.namespaceId },
          { header: 'name', value: (n) => n.name },
          { header: 'members', value: (n) => n.memberCount },
          { header: 'contexts', value: (n) => n.contextCount },
          { header: 'subgroups', value: (n) => n.subgroupCount },
          { header: 'created', value: (n) => when(n.createdAt) },
        ],
        'no namespaces yet: hearth namespace create --application <id>',
      );
    }),
  );

  connectOptions(ns.command('get').description('show one namespace').argument('<namespace>', NS, idArg(NS))).action(
    withCli(async (cli, [id]) => {
      const n = await cli.client.namespaces.get(id, { signal: cli.signal });
      cli.out.result(n, () => renderNamespace(n));
    }),
  );

  connectOptions(ns.command('delete').alias('del').description('delete a namespace with all its groups and contexts (root admins only)').argument('<namespace>', NS, idArg(NS)), {
    destructive: true,
  }).action(
    withCli(async (cli, [id]) => {
      await cli.confirm(`Delete namespace ${id} with all its groups and contexts?`);
      const r = await cli.client.namespaces.delete(id, { signal: cli.signal });
      cli.out.result({ namespaceId: id, ...r }, () => `deleted namespace ${id}`);
    }),
  );

  connectOptions(
    ns
      .command('invite')
      .description('create a signed invitation to the namespace (prints the JSON that join takes)')
      .argument('<namespace>', NS, idArg(NS))
      .option('--expires-in <seconds>', 'how long the invitation is valid (default and maximum 86400)', secondsArg)
      .option('--recursive', 'one invitation per group of the namespace this node may invite to')
      .option('--admitter <account>', 'account that may admit the joiner (repeatable; default: the admins)', idList('account id')),
  ).action(
    withCli<InviteFlags>(async (cli, [id], o) => {
      const body = { expirationTimestamp: o.expiresIn, admitters: o.admitter };
      const r = o.recursive
        ? await cli.client.invitations.inviteToNamespace(id, { ...body, recursive: true }, { signal: cli.signal })
        : await cli.client.invitations.inviteToNamespace(id, body, { signal: cli.signal });
      printInvitation(cli.out, r, `hearth namespace join ${id}`);
    }),
  );

  connectOptions(
    ns
      .command('join')
      .description('join a namespace with an invitation from another node')
      .argument('<namespace>', NS, idArg(NS))
      .argument('<invitation>', 'the invitation JSON, @file, or - for stdin'),
  ).action(
    withCli(async (cli, [id, source]) => {
      const invitation = pickInvitation(await readJsonArg(source, 'invitation'), id);
      // `groupId` is a wire alias for older clients (docs/decisions.md): said once here, as `namespaceId`
      const { groupId: _alias, ...r } = await cli.client.invitations.joinNamespace(id, invitation, { signal: cli.signal });
      cli.out.result(r, () => `joined namespace ${r.namespaceId}\naccount:         ${r.memberAccount}\nmember identity: ${r.memberIdentity}`);
    }),
  );

  connectOptions(ns.command('leave').description('leave a namespace and every group in it').argument('<namespace>', NS, idArg(NS)), { destructive: true }).action(
    withCli(async (cli, [id]) => {
      await cli.confirm(`Leave namespace ${id} and every group in it?`);
      await cli.client.namespaces.leave(id, { signal: cli.signal });
      cli.out.result({ namespaceId: id, left: true }, () => `left namespace ${id}`);
    }),
  );

  connectOptions(ns.command('groups').description('list every group below the namespace root').argument('<namespace>', NS, idArg(NS))).action(
    withCli(async (cli, [id]) => {
      const groups = await cli.client.namespaces.groups(id, { signal: cli.signal });
      cli.out.table(
        groups,
        [
          { header: 'group', value: (g) => g.groupId },
          { header: 'name', value: (g) => g.name },
        ],
        `no groups below the root yet: hearth namespace create-group ${id} --name <name>`,
      );
    }),
  );

  connectOptions(
    ns
      .command('create-group')
      .description('create a subgroup directly below the namespace root')
      .argument('<namespace>', NS, idArg(NS))
      .option('--name <text>', 'group name')
      .option('--visibility <open|restricted>', 'who may join without an invitation (default open)', visibilityArg),
  ).action(
    withCli<ConnectOpts & { name?: string; visibility?: 'open' | 'restricted' }>(async (cli, [id], o) => {
      const r = await cli.client.namespaces.createGroup(id, { groupName: o.name, visibility: o.visibility }, { signal: cli.signal });
      cli.out.result(r, () => `created group ${r.groupId}${o.name ? ` (${o.name})` : ''} in namespace ${id}`);
    }),
  );
}
