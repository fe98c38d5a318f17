/**
 * `hearth namespace` (alias `ns`; issue #6, product.md B4 `namespace`): create, list, get,
 * delete, invite, join, leave, groups, create-group — over the admin API's "Namespaces" routes
 * (admin-wire-b §2). Invitations print as JSON so they can be handed to `join` on another node
 * (`@file` or `-` for stdin). Delete and leave confirm unless `--yes`.
 */
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Command } from 'commander';
import { stringifyJson, type InvitationResult, type Namespace, type RecursiveInvitationResult } from '../client/index.ts';
import { connectOptions, withCli, type ConnectOpts } from './connect.ts';
import { UsageError } from './exit.ts';
import { decodeByteFields, when, type Output } from './output.ts';
import { encodeInvitation, idArg, idList, invitationGroup, pickInvitation, readInvitationArg, secondsArg, visibilityArg } from './group-args.ts';
import { idArgFor } from './id-args.ts';

const NS = 'namespace id';

interface InviteFlags extends ConnectOpts, InvitationFileFlags {
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

export interface InvitationFileFlags {
  /** a path, or `true` for `--out` without one: a new file under the home root's `invitations/` */
  out?: string | true;
  force?: boolean;
}

/** `--out [file]` and `--force` of `invite`. */
export function invitationFileOptions(cmd: Command): Command {
  return cmd
    .option('--out [file]', 'write the invitation to a file of mode 0600 (it is a credential) instead of stdout; without a file name, a new one under <home>/invitations/')
    .option('--force', 'replace an existing --out file');
}

/**
 * Where `--out` without a name writes: `<home root>/invitations/<group 12 hex>-<UTC time>.txt`, in a
 * 0700 folder beside the profiles, so a credential never lands in a working tree (a clone, a
 * package) by default (issue #34 §3).
 */
export async function defaultInvitationFile(homeRoot: string, groupId: string, now = new Date()): Promise<string> {
  const dir = join(homeRoot, 'invitations');
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const stamp = now.toISOString().replace(/[-:.]/g, ''); // to the millisecond: two invitations a second apart never meet
  return join(dir, `${groupId.slice(0, 12)}-${stamp}.txt`);
}

/**
 * Prints an invitation (issue #25 §3): one line for people — `inv1.…`, the compact form `join`
 * takes as it is, from a file or from stdin — with a how-to-join note on stderr; the SDK's answer
 * with `--output json`. With `--out <file>` the same text goes to a new file of mode 0600 (an
 * invitation admits whoever holds it until it expires), and stdout only says where.
 */
export async function printInvitation(out: Output, result: InvitationResult | RecursiveInvitationResult, joinCommand: string, file: InvitationFileFlags = {}, where: { homeRoot: string; groupId: string } = { homeRoot: '.', groupId: 'invitation' }): Promise<void> {
  const list = 'invitations' in result ? result.invitations : undefined;
  const first = list ? list[0]?.invitation : (result as InvitationResult).invitation;
  const expires = first?.invitation.expiration_timestamp;
  const what = list ? `${list.length} invitations` : 'invitation';
  const line = encodeInvitation(list ? result : (result as InvitationResult).invitation);
  if (file.out) {
    const path = file.out === true ? await defaultInvitationFile(where.homeRoot, where.groupId) : file.out;
    const text = out.json ? `${stringifyJson(decodeByteFields(result))}\n` : `${line}\n`;
    try {
      await writeFile(path, text, { mode: 0o600, flag: file.force ? 'w' : 'wx' });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') throw new UsageError(`${path} exists; pass --force to replace it`);
      throw err;
    }
    await chmod(path, 0o600); // --force on an existing file keeps its old mode otherwise
    out.result({ file: path, mode: '0600', expires: when(expires) }, () => `${what} written to ${path} (mode 0600; it is a credential until ${when(expires)})`);
    if (!out.json) process.stderr.write(`on the joining node run: ${joinCommand} @${path}\n`);
    return;
  }
  out.result(result, () => line);
  if (out.json) return;
  process.stderr.write(`${what} valid until ${when(expires)} (a credential: share it only with the joining node); on the joining node run: ${joinCommand} <this line> (or @<file>, or - for stdin)\n`);
}

/** The group of a one-entry recursive list; a longer list needs the namespace named. */
function soleGroup(printed: unknown): string | undefined {
  const list = (printed as { invitations?: { invitation?: unknown }[] } | null)?.invitations;
  if (!Array.isArray(list)) return undefined;
  if (list.length !== 1) throw new UsageError(`the invitation holds ${list.length} invitations (namespace invite --recursive): name the namespace first: hearth namespace join <namespace> <invitation>`);
  return invitationGroup(pickInvitation(list[0]?.invitation ?? null));
}

export function registerNamespaceCommands(program: Command): void {
  const ns = program.command('namespace').alias('ns').description('namespaces: the root groups that hold members, subgroups and contexts');

  connectOptions(
    ns
      .command('create')
      .description('found a namespace for an application; this node becomes its owner')
      .requiredOption('--application <id|alias>', 'application id, unique prefix (6+ hex), alias or @last', idArg('application id'))
      .option('--name <text>', 'display name')
      .option('--app-key <id>', 'bytecode (blob) id the namespace pins (default: chosen by the node)', idArg('app key')),
  ).action(
    withCli<ConnectOpts & { application: string; name?: string; appKey?: string }>(async (cli, _args, o) => {
      const r = await cli.client.namespaces.create({ applicationId: o.application, name: o.name, appKey: o.appKey }, { signal: cli.signal });
      cli.remember('namespace', r.namespaceId);
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
      cli.forget('namespace');
      cli.out.result({ namespaceId: id, ...r }, () => `deleted namespace ${id}`);
    }),
  );

  connectOptions(
    invitationFileOptions(
      ns
        .command('invite')
        .description('create a signed invitation to the namespace (prints one inv1.… line that join takes; the JSON with --output json)')
        .argument('<namespace>', NS, idArg(NS))
        .option('--expires-in <seconds>', 'how long the invitation is valid (default and maximum 86400)', secondsArg)
        .option('--recursive', 'one invitation per group of the namespace this node may invite to')
        .option('--admitter <account>', 'account that may admit the joiner (repeatable; default: the admins)', idList('account id')),
    ),
  ).action(
    withCli<InviteFlags>(async (cli, [id], o) => {
      const body = { expirationTimestamp: o.expiresIn, admitters: o.admitter };
      const r = o.recursive
        ? await cli.client.invitations.inviteToNamespace(id, { ...body, recursive: true }, { signal: cli.signal })
        : await cli.client.invitations.inviteToNamespace(id, body, { signal: cli.signal });
      await printInvitation(cli.out, r, 'hearth namespace join', o, { homeRoot: dirname(cli.profiles.dir), groupId: id });
    }),
  );

  connectOptions(
    ns
      .command('join')
      .description('join a namespace with an invitation from another node (the namespace is the one the invitation names)')
      .argument('<namespace|invitation>', 'the invitation (the inv1.… line or the JSON, @file, or - for stdin); or the namespace id (64 hex) followed by it')
      .argument('[invitation]', 'the invitation, when the namespace is given first'),
  ).action(
    withCli(async (cli, [first, second]) => {
      // `join <invitation>` or `join <namespace> <invitation>`
      const source = (second ?? first) as string;
      const named = second === undefined ? undefined : idArgFor()(first as string);
      const printed = await readInvitationArg(source);
      const invitation = pickInvitation(printed, named ?? soleGroup(printed));
      const id = named ?? invitationGroup(invitation);
      if (!id) throw new UsageError('the invitation names no namespace: pass it first (hearth namespace join <namespace> <invitation>)');
      // `groupId` is a wire alias for older clients (docs/decisions.md): said once here, as `namespaceId`
      const { groupId: _alias, ...r } = await cli.client.invitations.joinNamespace(id, invitation, { signal: cli.signal });
      cli.remember('namespace', r.namespaceId);
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
