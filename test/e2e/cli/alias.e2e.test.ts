/**
 * `hearth alias …` end to end (issue #6 CLI; admin spec "Aliases"): create, get, list and delete
 * in the three scopes, in human and JSON output, with parse-time checks and the node's refusals.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '../../../src/client/index.ts';
import { startCliNode, type CliNode, type CliUser } from '../../helpers/cli.ts';
import type { TestNode } from '../../helpers/node.ts';

let cli: CliNode;
let node: TestNode;
let user: CliUser;
let sdk: Client;
const ctx = 'c1'.repeat(32);
const dev = 'd2'.repeat(32);

beforeAll(async () => {
  cli = await startCliNode();
  ({ node, sdk, user } = cli);
}, 60_000);

afterAll(() => cli?.destroy());

describe('hearth alias', { timeout: 120_000 }, () => {
  it('creates aliases in both formats; the id is normalised to lowercase hex', async () => {
    expect(await user.json(['alias', 'create', 'context', 'main', ctx.toUpperCase()])).toEqual({ scope: 'context', name: 'main', value: ctx });
    expect(await user.human(['alias', 'add', 'device', 'laptop', dev])).toBe(`device alias "laptop" → ${dev}\n`);
    expect(await sdk.aliases.lookup('context', 'main')).toBe(ctx);
    expect(await sdk.aliases.lookup('device', 'laptop')).toBe(dev);
  });

  it('a taken name is the node\'s 409 (exit 1, its message); a bad id or scope fails at parse time (exit 2)', async () => {
    const taken = await user.run(['alias', 'create', 'context', 'main', dev]);
    expect(taken.code).toBe(1);
    expect(taken.stderr).toMatch(/^hearth: .*(HTTP 409)/m);
    expect(await sdk.aliases.lookup('context', 'main')).toBe(ctx);
    const badId = await user.run(['alias', 'create', 'context', 'other', 'xyz']);
    expect(badId.code).toBe(2);
    // a context id may be a prefix, an alias or @last (issue #25): an unknown one is named
    expect(badId.stderr).toContain('<id>: no context alias "xyz" on this node');
    const badDevice = await user.run(['alias', 'create', 'device', 'phone', 'xyz']);
    expect(badDevice.code).toBe(2);
    expect(badDevice.stderr).toContain('hearth: <id>: expected 64 hex characters');
    const badScope = await user.run(['alias', 'list', 'identity']);
    expect(badScope.code).toBe(2);
    expect(badScope.stderr).toContain('context, application, device');
    const badName = await user.run(['alias', 'create', 'context', 'no spaces', ctx, '--output', 'json']);
    expect(badName.code).toBe(1);
    expect(JSON.parse(badName.stderr)).toMatchObject({ exitCode: 1, status: 400, error: expect.stringContaining('Invalid alias') });
  });

  it('get prints the id, or says there is none and exits 1', async () => {
    expect(await user.json(['alias', 'get', 'context', 'main'])).toEqual({ scope: 'context', name: 'main', value: ctx });
    expect(await user.human(['alias', 'get', 'device', 'laptop'])).toBe(`${dev}\n`);
    const none = await user.run(['alias', 'get', 'application', 'ghost']);
    expect(none.code).toBe(1);
    expect(none.stdout).toBe('no application alias "ghost" (see: hearth alias list application)\n');
  });

  it('lists a scope as a table or as the node\'s map', async () => {
    await sdk.aliases.create('context', 'alpha', dev);
    expect(await user.json(['alias', 'list', 'context'])).toEqual({ main: ctx, alpha: dev });
    const table = await user.human(['alias', 'ls', 'context']);
    expect(table).toBe(`ALIAS  ID\nalpha  ${dev}\nmain   ${ctx}\n`);
    expect(await user.human(['alias', 'list', 'application'])).toContain('no application aliases');
  });

  it('delete asks first (exit 2 without --yes, nothing removed), then removes in both formats', async () => {
    const res = await user.run(['alias', 'delete', 'context', 'main']);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('pass --yes');
    expect(await sdk.aliases.lookup('context', 'main')).toBe(ctx);
    expect(await user.json(['alias', 'delete', 'context', 'main', '--yes'])).toEqual({ scope: 'context', name: 'main', deleted: true });
    expect(await user.human(['alias', 'rm', 'device', 'laptop', '-y'])).toBe('deleted device alias "laptop"\n');
    expect(await sdk.aliases.list('context')).toEqual({ alpha: dev });
    expect(await sdk.aliases.list('device')).toEqual({});
  });
});
