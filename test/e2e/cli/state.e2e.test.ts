/**
 * `hearth context state` (issue #25 §4) against a real node running the kv_flat test application
 * (its ABI names no listing method): one page or all of them, in JSON and as a table, the context
 * named by alias, id prefix or `@last` (`hearth use context`), one row's value, and the refusals
 * (usage 2 for a malformed flag, 1 with the node's message for an unknown context).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '../../../src/client/index.ts';
import { installTestApp, startCliNode, type CliNode, type CliUser } from '../../helpers/cli.ts';
import type { TestNode } from '../../helpers/node.ts';

const hexOf = (s: string) => Buffer.from(s, 'utf8').toString('hex');
const ITEMS = 130;
/** the items, the count and the root the app keeps */
const ROWS = ITEMS + 2;

let cli: CliNode;
let node: TestNode;
let sdk: Client;
let user: CliUser;
let ctx: string;

beforeAll(async () => {
  cli = await startCliNode();
  ({ node, sdk, user } = cli);
  const { ns } = await installTestApp(sdk, 'kv_flat', 'com.hearth.kv-flat.cli-state');
  ctx = (await sdk.contexts.create({ groupId: ns, initializationParams: [] })).contextId;
  await sdk.rpc.execute(ctx, 'fill', { prefix: 'k', from: 0, count: ITEMS });
  await sdk.aliases.create('context', 'flat', ctx);
}, 180_000);
afterAll(() => cli?.destroy());

describe('hearth context state', { timeout: 120_000 }, () => {
  it('prints one page as the SDK reads it, and the rest after --after; --all reads every row', async () => {
    const first = await user.json(['context', 'state', 'flat']);
    expect(first).toEqual(await sdk.contexts.rawState(ctx));
    expect(first.entries).toHaveLength(100);
    const rest = await user.json(['context', 'state', 'flat', '--after', first.next]);
    expect(rest.entries).toHaveLength(ROWS - 100);
    expect(rest.next).toBeNull();
    const all = await user.json(['context', 'state', 'flat', '--all', '--limit', '7']);
    expect(all.entries.map((e: { key: string }) => e.key)).toEqual([...first.entries, ...rest.entries].map((e: { key: string }) => e.key));
    expect(all.next).toBeNull();
    for (let i = 0; i < ITEMS; i++) expect(all.entries.map((e: { key: string }) => e.key)).toContain(hexOf(`flat:item:k${i}`));
  });

  it('accepts an id prefix and @last (hearth use context)', async () => {
    const page = await user.json(['context', 'state', ctx.slice(0, 8), '--limit', '3']);
    expect(page.entries).toHaveLength(3);
    await user.human(['use', 'context', ctx]);
    expect(await user.json(['context', 'state', '@last', '--limit', '3'])).toEqual(page);
  });

  it('shows a table of readable keys, sizes and previews, and says how to go on', async () => {
    const res = await user.run(['context', 'state', 'flat', '--limit', '5']);
    expect(res.code, res.stderr).toBe(0);
    const lines = res.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^KEY\s+SIZE\s+PREVIEW$/);
    expect(lines).toHaveLength(6);
    expect(res.stdout).toMatch(new RegExp(`^"flat:count"\\s+3\\s+${ITEMS}$`, 'm'));
    expect(res.stdout).toMatch(/^"flat:item:k0"\s+2\s+v0$/m);
    expect(res.stderr).toMatch(/more rows: add --after [0-9a-f]+ \(or --all\)/);
    const root = await user.run(['context', 'state', 'flat', '--after', hexOf('flat:item:k99')]);
    expect(root.stdout).toMatch(/^"flat:root"\s+32\s+0x[0-9a-f]{64}$/m);
    expect(root.stderr).not.toMatch(/more rows/);
  });

  it('prints one row’s value (--value)', async () => {
    expect(await user.human(['context', 'state', 'flat', '--value', hexOf('flat:item:k42')])).toMatch(/value: +v42$/m);
    expect(await user.json(['context', 'state', 'flat', '--value', hexOf('flat:item:k42')])).toEqual({
      key: hexOf('flat:item:k42'),
      size: 3,
      encoding: 'base64',
      value: Buffer.from('v42').toString('base64'),
      truncated: false,
    });
    const missing = await user.run(['context', 'state', 'flat', '--value', hexOf('no-such-key')]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/No state row with key/);
  });

  it('refuses a malformed --after or --limit (usage, 2) and an unknown context (1)', async () => {
    for (const args of [
      ['--after', 'xyz'],
      ['--after', 'abc'],
      ['--limit', '0'],
      ['--limit', '501'],
      ['--limit', 'ten'],
    ]) {
      const res = await user.run(['context', 'state', 'flat', ...args]);
      expect(res.code, args.join(' ')).toBe(2);
      expect(res.stderr).toMatch(args[0] === '--after' ? /hex/ : /1 to 500/);
    }
    const unknown = await user.run(['context', 'state', '9'.repeat(64)]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/Context not found/);
  });
});
