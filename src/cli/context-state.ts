/**
 * `hearth context state <context> [--after <hex>] [--limit <n>] [--all]` (issue #25 §4): a context's
 * raw storage rows — key, size and a preview of the value — from hearth's admin-only route
 * `GET /contexts/{id}/raw-state` (docs/contexts.md "Raw state rows"). One page by default (the
 * next page's `--after` is said on stderr); `--all` follows the pages to the end. `--output json`
 * prints `{entries, next}`; `--value <hex key>` prints one row's value instead.
 */
import { InvalidArgumentError, type Command } from 'commander';
import type { RawStateEntry, RawStatePage } from '../client/index.ts';
import { contextRefArg, resolveRef, type Ref } from './context-args.ts';
import { connectOptions, withCli, type Cli, type ConnectOpts } from './connect.ts';
import { renderRecord } from './output.ts';

/** the node's bound on a page */
const MAX_PAGE = 500;
/** how much of a key the table shows (in hex characters) unless `--wide` */
const KEY_SHOWN = 24;

function hexKeyArg(value: string): string {
  if (!/^(?:[0-9a-fA-F]{2})*$/.test(value)) throw new InvalidArgumentError('must be a state key in hex (an even number of hex digits)');
  return value.toLowerCase();
}

function pageSizeArg(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || n < 1 || n > MAX_PAGE) throw new InvalidArgumentError(`must be a whole number from 1 to ${MAX_PAGE}`);
  return n;
}

interface StateFlags extends ConnectOpts {
  after?: string;
  limit?: number;
  all?: boolean;
  value?: string;
}

/** How a key reads in a table: its text when the key is printable ASCII, else hex; shortened unless wide. */
export function keyLabel(hex: string, wide = false): string {
  const text = Buffer.from(hex, 'hex').toString('latin1');
  const readable = hex.length > 0 && /^[\x20-\x7e]+$/.test(text);
  const shown = readable ? `"${text}"` : hex || '(empty key)';
  return wide || shown.length <= KEY_SHOWN ? shown : `${shown.slice(0, KEY_SHOWN - 1)}…`;
}

const previewLabel = (e: RawStateEntry) => (e.previewEncoding === 'hex' ? `0x${e.preview}` : e.preview) + (e.size > 64 ? '…' : '');

async function readRows(cli: Cli, id: string, flags: StateFlags): Promise<RawStatePage> {
  const opts = { signal: cli.signal };
  if (!flags.all) return cli.client.contexts.rawState(id, { after: flags.after, limit: flags.limit }, opts);
  const entries: RawStateEntry[] = [];
  let after = flags.after;
  const progress = cli.progress('reading state rows');
  for (;;) {
    const page = await cli.client.contexts.rawState(id, { after, limit: flags.limit ?? MAX_PAGE }, opts);
    entries.push(...page.entries);
    progress.phase(`${entries.length} rows`);
    if (page.next === null) break;
    after = page.next;
  }
  progress.done(`${entries.length} rows`);
  return { entries, next: null };
}

export function registerContextStateCommand(context: Command): void {
  connectOptions(
    context
      .command('state')
      .description("list a context's raw storage rows (key, size, preview), paged; admin only")
      .argument('<context>', 'context id, unique prefix (6+ hex), alias or @last', contextRefArg())
      .option('--after <hex key>', 'start after this key (the previous page’s next key)', hexKeyArg)
      .option('--limit <n>', `rows per page, 1 to ${MAX_PAGE} (the node's default: 100)`, pageSizeArg)
      .option('--all', 'follow the pages to the last row')
      .option('--value <hex key>', "print one row's whole value (base64 in JSON; text or hex here) instead of the rows", hexKeyArg),
  ).action(
    withCli<StateFlags>(async (cli, [ref], flags) => {
      const id = await resolveRef(cli, ref as unknown as Ref, 'context', '<context>');
      if (flags.value !== undefined) {
        const v = await cli.client.contexts.rawStateValue(id, flags.value, { signal: cli.signal });
        const bytes = Buffer.from(v.value, 'base64');
        const text = bytes.toString('utf8');
        const readable = !/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f\ufffd]/.test(text);
        cli.out.result(v, () =>
          renderRecord({ key: keyLabel(v.key, true), size: `${v.size} bytes${v.truncated ? ' (only the first 1 MiB shown)' : ''}`, value: readable ? text : `0x${bytes.toString('hex')}` }),
        );
        return;
      }
      const page = await readRows(cli, id, flags);
      if (cli.out.json) {
        cli.out.result(page, () => '');
        return;
      }
      cli.out.table(
        page.entries,
        [
          { header: 'key', value: (e) => (cli.out.format === 'plain' ? e.key : keyLabel(e.key, cli.out.options.wide)) },
          { header: 'size', value: (e) => e.size },
          { header: 'preview', value: (e) => (cli.out.format === 'plain' ? e.preview : previewLabel(e)) },
        ],
        flags.after ? 'no rows after that key' : 'no state rows: the context holds no state on this node',
      );
      if (page.next !== null) process.stderr.write(`more rows: add --after ${page.next} (or --all)\n`);
    }),
  );
}
