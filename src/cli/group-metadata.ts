/**
 * `hearth group metadata | member-metadata | context-metadata {get | set}` (issue #6, product.md B4)
 * over the metadata routes (admin-wire-b §6). `set` is a read-modify-write of the stored record, as
 * the reference CLI's: `--name` replaces the name (absent keeps it), `--set k=v` / `--unset k` edit
 * the data map, `--data` (JSON, `@file` or `-`) or `--replace-data` start from a new map. It prints
 * the record as the node stores it afterwards.
 */
import type { Command } from 'commander';
import type { CallOptions, Client, MetadataRecord, SetMetadataRequest } from '../client/index.ts';
import { connectOptions, withCli, type ConnectOpts } from './connect.ts';
import { idArg, metadataOptions, metadataRequest, renderMetadata, type MetadataFlags } from './group-args.ts';

const GROUP = 'group id';

interface Target {
  command: string;
  about: string;
  /** the second argument (member account or context), if any */
  second?: { name: string; what: string };
  get(client: Client, group: string, second: string | undefined, options: CallOptions): Promise<MetadataRecord | null>;
  set(client: Client, group: string, second: string | undefined, request: SetMetadataRequest, options: CallOptions): Promise<void>;
  label(group: string, second?: string): string;
}

const TARGETS: Target[] = [
  {
    command: 'metadata',
    about: "a group's metadata record (name and string map)",
    get: (c, g, _s, o) => c.settings.groupMetadata(g, o),
    set: (c, g, _s, r, o) => c.settings.setGroupMetadata(g, r, o),
    label: (g) => `group ${g}`,
  },
  {
    command: 'member-metadata',
    about: "a member's metadata record in a group",
    second: { name: 'account', what: 'account id' },
    get: (c, g, s, o) => c.settings.memberMetadata(g, s!, o),
    set: (c, g, s, r, o) => c.settings.setMemberMetadata(g, s!, r, o),
    label: (g, s) => `member ${s} of group ${g}`,
  },
  {
    command: 'context-metadata',
    about: "a group-registered context's metadata record",
    second: { name: 'context', what: 'context id' },
    get: (c, g, s, o) => c.settings.contextMetadata(g, s!, o),
    set: (c, g, s, r, o) => c.settings.setContextMetadata(g, s!, r, o),
    label: (g, s) => `context ${s} in group ${g}`,
  },
];

function withTarget(cmd: Command, t: Target): Command {
  cmd.argument('<group>', GROUP, idArg(GROUP));
  if (t.second) cmd.argument(`<${t.second.name}>`, t.second.what, idArg(t.second.what));
  return cmd;
}

export function registerGroupMetadataCommands(group: Command): void {
  for (const t of TARGETS) {
    const parent = group.command(t.command).description(t.about);

    connectOptions(withTarget(parent.command('get').description(`show ${t.about}`), t)).action(
      withCli(async (cli, [id, second]) => {
        const record = await t.get(cli.client, id, second, { signal: cli.signal });
        cli.out.result(record, () => renderMetadata(record, `no metadata set on ${t.label(id, second)}`));
      }),
    );

    connectOptions(metadataOptions(withTarget(parent.command('set').description(`update ${t.about} (read-modify-write)`), t))).action(
      withCli<ConnectOpts & MetadataFlags>(async (cli, [id, second], o) => {
        const options = { signal: cli.signal };
        const request = await metadataRequest(await t.get(cli.client, id, second, options), o);
        await t.set(cli.client, id, second, request, options);
        const record = await t.get(cli.client, id, second, options);
        cli.out.result(record, () => `updated ${t.label(id, second)}\n${renderMetadata(record, '(no record)')}`);
      }),
    );
  }
}
