/**
 * Operator CLI, `hearth context …` and `hearth call` (issue #6) against a real node running the
 * kv-store test application: every command in human and JSON output, ids and aliases checked at
 * parse time, destructive verbs refused without `--yes`, and the exit code and node message of
 * failures (usage 2, node 1, auth 3).
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, MemoryTokenStore, type Client } from '../../../src/client/index.ts';
import { makeBundle } from '../../helpers/bundles.ts';
import { CliUser, installTestApp, startCliNode, type CliNode } from '../../helpers/cli.ts';
import { startTestNode, type TestNode } from '../../helpers/node.ts';
import { buildTestApp } from '../../helpers/wasm-apps.ts';

const HEX = /^[0-9a-f]{64}$/;
let cli: CliNode;
let node: TestNode;
let sdk: Client;
let user: CliUser;
let appId: string;
let ns: string;
let me: string;
/** created through the CLI (JSON mode) */
let ctx: string;
/** created through the CLI (human mode) */
let second: string;

beforeAll(async () => {
  cli = await startCliNode();
  ({ node, sdk, user } = cli);
  ({ appId, ns } = await installTestApp(sdk, 'kv', 'com.hearth.kv'));
  me = (await sdk.http.data<{ publicKey: string }>('/admin-api/identity')).publicKey;
}, 180_000);
afterAll(() => cli?.destroy());

describe('hearth context create | list | get | identities', { timeout: 120_000 }, () => {
  it('creates contexts in both output modes; init ran and they are registered in the group', async () => {
    const created = await user.json(['context', 'create', '--application', appId, '--group', ns]);
    expect(created).toEqual({ contextId: expect.stringMatching(HEX), memberPublicKey: me, groupId: ns, groupCreated: false });
    ctx = created.contextId;
    const text = await user.human(['context', 'create', '--application', appId, '--group', ns, '--name', 'second']);
    const m = /^created context ([0-9a-f]{64})\n {2}group: +([0-9a-f]{64})\n {2}member key: ([0-9a-f]{64})\n$/.exec(text);
    expect(m, text).not.toBeNull();
    second = m![1];
    expect([m![2], m![3]]).toEqual([ns, me]);
    expect((await sdk.groups.contexts(ns)).map((c) => c.contextId).sort()).toEqual([ctx, second].sort());
    expect((await sdk.contexts.get(ctx)).contextStateHash).not.toBe('f'.repeat(64));
  });

  it('lists contexts as a table (100 columns, or full ids with --wide, aliases as names), or as the SDK list; --application filters (alias accepted)', async () => {
    const listed = await user.json(['context', 'list']);
    const hex = (heads?: number[][]) => heads?.map((h) => Buffer.from(h).toString('hex'));
    // the SDK's rows, with their aliases, and the DAG heads (bytes) as hex
    expect(listed).toEqual((await sdk.contexts.list()).map((c) => ({ ...c, aliases: [], ...(c.dagHeads ? { dagHeads: hex(c.dagHeads) } : {}) })));
    expect(await user.json(['context', 'ls', '--raw'])).toEqual((await sdk.contexts.list()).map((c) => ({ ...c, aliases: [] })));
    expect(listed.map((c: { id: string }) => c.id).sort()).toEqual([ctx, second].sort());
    const wide = await user.human(['context', 'ls', '--wide']);
    expect(wide.split('\n')[0]).toMatch(/^CONTEXT\s+NAME\s+APPLICATION\s+GROUP$/);
    expect(wide).toMatch(new RegExp(`^${second}\\s+second\\s+com\\.hearth\\.kv\\s+${ns}$`, 'm'));
    expect(wide).toMatch(new RegExp(`^${ctx}\\s+-\\s+com\\.hearth\\.kv\\s+${ns}$`, 'm'));
    // without --wide the ids are shortened to fit 100 columns; an alias names its context
    await sdk.aliases.create('context', 'first-ctx', ctx);
    const table = await user.human(['context', 'ls']);
    expect(Math.max(...table.trimEnd().split('\n').map((l) => l.length))).toBeLessThanOrEqual(100);
    expect(table).toMatch(new RegExp(`^${ctx.slice(0, 20)}\\S*…\\s+first-ctx\\s`, 'm'));
    await sdk.aliases.delete('context', 'first-ctx');

    await sdk.aliases.create('application', 'kv-app', appId);
    expect(await user.json(['context', 'list', '--application', 'kv-app'])).toHaveLength(2);
    expect(await user.json(['context', 'list', '--application', 'a'.repeat(64)])).toEqual([]);
    expect(await user.human(['context', 'list', '--application', 'a'.repeat(64)])).toContain('no contexts yet: hearth context create');
  });

  it('gets one context by id or by context alias', async () => {
    const got = await user.json(['context', 'get', ctx, '--raw']);
    expect(got).toEqual(await sdk.contexts.get(ctx));
    expect((await user.json(['context', 'get', ctx])).dagHeads).toEqual([Buffer.from(got.dagHeads[0]).toString('hex')]);
    await sdk.aliases.create('context', 'kv-main', ctx);
    const text = await user.human(['context', 'get', 'kv-main']);
    expect(text).toContain(`context:     ${ctx}\n`);
    expect(text).toContain(`application: ${appId}\n`);
    expect(text).toContain(`state hash:  ${got.contextStateHash}\n`);
    expect(text).toContain(`dag heads:   ${Buffer.from(got.dagHeads[0]).toString('hex')}\n`);
  });

  it('lists member identities, and with --owned the ones this node holds', async () => {
    expect(await user.json(['context', 'identities', ctx])).toEqual({ identities: [me], identitiesOf: 'members' });
    expect(await user.json(['context', 'identities', ctx, '--owned'])).toEqual({ identities: [me], identitiesOf: 'node' });
    expect(await user.human(['context', 'identities', ctx])).toBe(`IDENTITY\n${me}\n`);
  });

  it('refuses a malformed id at parse time and an unknown alias with exit 2, naming the argument', async () => {
    const bad = await user.run(['context', 'get', 'not/an-id']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("argument 'context'");
    const unknown = await user.run(['context', 'get', 'no-such-alias']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('<context>: no context alias "no-such-alias" on this node');
    expect(unknown.stderr).toContain('hearth alias list context');
    const group = await user.run(['context', 'create', '--application', appId, '--group', 'xyz']);
    expect(group.code).toBe(2);
    expect(group.stderr).toContain("option '--group <id>' argument 'xyz' is invalid");
  });

  it('prints the node message with exit 1 for a context the node does not hold (both modes)', async () => {
    const human = await user.run(['context', 'get', 'e'.repeat(64)]);
    expect(human.code).toBe(1);
    expect(human.stderr).toBe('hearth: Context not found (HTTP 404)\n');
    const json = await user.run(['context', 'get', 'e'.repeat(64), '--output', 'json']);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stderr)).toMatchObject({ error: 'Context not found (HTTP 404)', exitCode: 1, status: 404 });
    expect(json.stdout).toBe('');
  });

  it('is an auth failure (exit 3) without a login', async () => {
    const stranger = await CliUser.create(node.url);
    try {
      const res = await stranger.run(['context', 'list']);
      expect(res.code).toBe(3);
      expect(res.stderr).toBe('hearth: not logged in: hearth login\n');
    } finally {
      await stranger.destroy();
    }
  });
});

describe('hearth call and context query', { timeout: 120_000 }, () => {
  it('calls a method with --args inline, from @file and from stdin, and prints its output', async () => {
    expect(await user.json(['call', 'set', '--context', ctx, '--args', '{"key":"k","value":"hello"}'])).toBeNull();
    expect(await user.human(['call', 'set', '--context', 'kv-main', '--args', '{"key":"j","value":"from human"}'])).toBe('set: no return value\n');
    const file = join(user.root, 'args.json');
    await writeFile(file, '{"key":"k"}');
    expect(await user.json(['call', 'get', '--context', ctx, '--args', `@${file}`])).toBe('hello');
    expect(await user.human(['call', 'get', '--context', ctx, '--args', '-'], { input: '{"key":"j"}' })).toBe('from human\n');
    expect(await user.json(['call', 'entries', '--context', ctx])).toEqual({ j: 'from human', k: 'hello' });
    // `hearth context call` is the same command under the context group.
    expect(await user.json(['context', 'call', 'get', '--context', ctx, '--args', '{"key":"k"}'])).toBe('hello');
    expect(await user.human(['context', 'call', 'len', '--context', 'kv-main'])).toBe('2\n');
    expect(await user.human(['call', 'len', '--context', ctx])).toBe('2\n');
    expect(await sdk.rpc.execute(ctx, 'get', { key: 'k' })).toBe('hello');
  });

  it('an application error is a node error (exit 1) showing the application payload as text', async () => {
    const human = await user.run(['call', 'get_result', '--context', ctx, '--args', '{"key":"missing"}']);
    expect(human.code).toBe(1);
    expect(human.stderr).toBe('hearth: FunctionCallError: the method call returned an error: {"data":"missing","kind":"NotFound"}\n');
    const json = await user.run(['call', 'get_unchecked', '--context', ctx, '--args', '{"key":"missing"}', '--output', 'json']);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stderr)).toMatchObject({ exitCode: 1, error: expect.stringContaining('key not found') });
    const ghost = await user.run(['call', 'get', '--context', 'e'.repeat(64)]);
    expect(ghost.code).toBe(1);
    expect(ghost.stderr).toContain('ContextNotFound');
  });

  it('refuses bad --args, --context and --executor before calling (exit 2)', async () => {
    const args = await user.run(['call', 'set', '--context', ctx, '--args', '{key:']);
    expect(args.code).toBe(2);
    expect(args.stderr).toContain('--args from the argument is not valid JSON');
    const missing = await user.run(['call', 'set', '--context', ctx, '--args', '@/nonexistent/args.json']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('--args: cannot read file /nonexistent/args.json: no such file or directory');
    const noContext = await user.run(['call', 'get']);
    expect(noContext.code).toBe(2);
    expect(noContext.stderr).toContain("required option '--context <id|alias>' not specified");
    const executor = await user.run(['call', 'get', '--context', ctx, '--executor', 'me']);
    expect(executor.code).toBe(2);
    expect(executor.stderr).toContain("option '--executor <public key>' argument 'me' is invalid");
    expect(await user.json(['call', 'get', '--context', ctx, '--executor', me, '--args', '{"key":"k"}'])).toBe('hello');
  });

  it('queries read-only methods; a write method is the node refusal (409, exit 1)', async () => {
    expect(await user.json(['context', 'query', ctx, 'get', '--args', '{"key":"k"}'])).toBe('hello');
    expect(await user.human(['context', 'query', 'kv-main', 'entries'])).toBe('{"k":"hello","j":"from human"}\n');
    const write = await user.run(['context', 'query', ctx, 'set', '--args', '{"key":"k","value":"x"}']);
    expect(write.code).toBe(1);
    expect(write.stderr).toMatch(/^hearth: .+ \(HTTP 409\)\n$/);
    expect(await sdk.rpc.execute(ctx, 'get', { key: 'k' })).toBe('hello');
  });
});

describe('hearth context update | sync', { timeout: 120_000 }, () => {
  it('update moves a context to an installed application (alias accepted); one not installed is the node refusal', async () => {
    expect(await user.json(['context', 'update', ctx, '--application', 'kv-app'])).toEqual({ contextId: ctx, applicationId: appId });
    expect(await user.human(['context', 'update', 'kv-main', '--application', appId])).toBe(`context ${ctx} now runs application ${appId}\n`);
    const missing = await user.run(['context', 'update', ctx, '--application', 'c'.repeat(64)]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe(`hearth: application '${'c'.repeat(64)}' is not installed on this node (HTTP 400)\n`);
    expect((await sdk.contexts.get(ctx)).applicationId).toBe(appId);
  });

  it('sync is accepted for one context or for every context', async () => {
    expect(await user.json(['context', 'sync', ctx])).toEqual({ contextId: ctx, requested: true });
    expect(await user.human(['context', 'sync'])).toBe('sync of every context requested; follow it with: hearth events watch\n');
    const unknown = await user.run(['context', 'sync', 'e'.repeat(64)]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('(HTTP 404)');
  });
});

describe('hearth context join | leave | delete', { timeout: 120_000 }, () => {
  it('leave asks first: without --yes and without a terminal it exits 2 and the node is still a member', async () => {
    const res = await user.run(['context', 'leave', ctx]);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('pass --yes to confirm');
    expect(await sdk.rpc.execute(ctx, 'get', { key: 'k' })).toBe('hello');
  });

  it('context status reads hearth\'s sync-status route; a node without a network says so', async () => {
    const status = await user.json(['context', 'status', ctx]);
    expect(status).toMatchObject({ contextId: ctx, sync: { state: 'idle', caughtUp: true, behind: 0 } });
    expect(status.sync).not.toHaveProperty('contextId'); // said once, beside it
    expect(await user.human(['context', 'status', ctx])).toMatch(/caught up: +yes/);

    const standalone = await startTestNode({ network: null });
    const there = await CliUser.create(standalone.url);
    try {
      const c = createClient({ baseUrl: standalone.url, tokenStore: new MemoryTokenStore() });
      await c.auth.login({ username: standalone.adminUser, password: standalone.adminPassword });
      const bundle = await makeBundle({ wasm: await buildTestApp('kv'), package: 'com.hearth.kv' });
      await c.applications.installDev(bundle.path);
      const { namespaceId } = await c.namespaces.create({ applicationId: (await c.applications.list())[0].id });
      const { contextId } = await c.contexts.create({ groupId: namespaceId, initializationParams: [] });
      await there.login(standalone.adminUser, standalone.adminPassword);
      expect(await there.json(['context', 'status', contextId])).toMatchObject({ contextId, sync: null });
      expect(await there.human(['context', 'status', contextId])).toContain('runs without a network');
      const waited = await there.run(['context', 'status', contextId, '--wait', '--within', '1']);
      expect(waited.code).toBe(1);
      expect(waited.stderr).toContain('not caught up after 1 s (no network)');
    } finally {
      await there.destroy();
      await standalone.destroy();
    }
  });

  it('leaves with --yes (calls then fail) and joins again (both modes)', async () => {
    expect(await user.json(['context', 'leave', ctx, '--yes'])).toEqual({ contextId: ctx, left: true });
    const call = await user.run(['call', 'get', '--context', ctx, '--args', '{"key":"k"}']);
    expect(call.code).toBe(1);
    expect(call.stderr).toContain('No owned identity found for this context');
    expect(await user.human(['context', 'join', ctx])).toBe(`joined context ${ctx} as ${me}\n`);
    expect(await user.json(['call', 'get', '--context', ctx, '--args', '{"key":"k"}'])).toBe('hello');
    expect(await user.json(['context', 'join', ctx])).toEqual({ contextId: ctx, memberPublicKey: me });
    expect(await user.human(['context', 'leave', second, '-y'])).toBe(`left context ${second}\n`);
    await user.human(['context', 'join', second]);
  });

  it('delete asks first: without --yes and without a terminal it exits 2 and deletes nothing', async () => {
    const res = await user.run(['context', 'delete', second, '--output', 'json']);
    expect(res.code).toBe(2);
    expect(JSON.parse(res.stderr)).toMatchObject({ exitCode: 2, error: expect.stringContaining(`Delete context ${second}`) });
    expect((await sdk.contexts.get(second)).id).toBe(second);
  });

  it('deletes with --yes in both modes; deleting an unknown context deletes nothing', async () => {
    expect(await user.json(['context', 'delete', second, '--yes'])).toEqual({ contextId: second, deleted: true });
    expect(await user.human(['context', 'del', 'kv-main', '--yes'])).toBe(`deleted context ${ctx}\n`);
    expect(await sdk.contexts.list()).toEqual([]);
    expect(await user.human(['context', 'delete', second, '--yes'])).toBe(`no context ${second} on this node: nothing deleted\n`);
    expect(await user.json(['context', 'list'])).toEqual([]);
  });
});
