/**
 * The CLI knows an application (issue #34 §2), against a real node running the kv test application:
 * `hearth app methods <app>` lists the ABI's methods (name, arguments, returns, read or write) by id,
 * prefix or alias; `hearth call` with an unknown method lists the declared ones and an argument-shape
 * failure shows the expected arguments; a raw `.wasm` handed to an install names `hearth app bundle`;
 * `hearth completion bash|zsh` and the hidden `__complete` that lists commands, options and the
 * node's ids and aliases.
 */
import { execFileSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '../../../src/client/index.ts';
import { makeBundle, tinyWasm } from '../../helpers/bundles.ts';
import { installTestApp, startCliNode, type CliNode, type CliUser } from '../../helpers/cli.ts';
import type { TestNode } from '../../helpers/node.ts';

let cli: CliNode;
let node: TestNode;
let sdk: Client;
let user: CliUser;
let appId: string;
let bare: string;
let ctx: string;

beforeAll(async () => {
  cli = await startCliNode();
  ({ node, sdk, user } = cli);
  const installed = await installTestApp(sdk, 'kv', 'com.hearth.kv');
  appId = installed.appId;
  // an application without an ABI
  bare = (await sdk.applications.installDev((await makeBundle({ wasm: tinyWasm(), package: 'com.hearth.bare' })).path)).applicationId;
  ctx = (await sdk.contexts.create({ applicationId: appId, groupId: installed.ns })).contextId;
}, 180_000);
afterAll(() => cli?.destroy());

describe('hearth app methods', { timeout: 120_000 }, () => {
  it('lists the methods with arguments, returns and access, by id, prefix and alias', async () => {
    const listed = await user.json(['app', 'methods', appId]);
    const byName = Object.fromEntries(listed.map((m: { name: string }) => [m.name, m]));
    expect(listed.map((m: { name: string }) => m.name)).toEqual(['init', 'set', 'get', 'entries', 'len', 'remove', 'clear', 'get_result', 'get_unchecked']);
    expect(byName.set).toEqual({ name: 'set', args: [{ name: 'key', type: 'string' }, { name: 'value', type: 'string' }], returns: null, access: 'write' });
    expect(byName.get).toEqual({ name: 'get', args: [{ name: 'key', type: 'string' }], returns: 'string?', access: 'read' });
    expect(byName.entries).toMatchObject({ returns: 'map<string, string>', access: 'read' });
    // reads that fail (an application error, a panic) are still reads
    expect([byName.get_result.access, byName.get_unchecked.access, byName.clear.access]).toEqual(['read', 'read', 'write']);

    const table = await user.human(['app', 'methods', appId.slice(0, 8)]);
    expect(table.split('\n')[0]).toMatch(/^METHOD\s+ARGUMENTS\s+RETURNS\s+ACCESS$/);
    expect(table).toMatch(/^set\s+key: string, value: string\s+-\s+write$/m);
    expect(table).toMatch(/^get_result\s+key: string\s+string\s+read$/m);
    await sdk.aliases.create('application', 'kv', appId);
    expect(await user.json(['app', 'methods', 'kv'])).toEqual(listed);
  });

  it('says so for an application without an ABI, and for an unknown application', async () => {
    const none = await user.run(['app', 'methods', bare]);
    expect(none.code).toBe(1);
    expect(none.stderr).toBe(`hearth: application ${bare} carries no ABI, so its methods are unknown (hearth app bundle --abi <file> embeds one)\n`);
    const ghost = await user.run(['app', 'methods', 'e'.repeat(64)]);
    expect(ghost.code).not.toBe(0);
  });
});

describe('hearth call hints', { timeout: 120_000 }, () => {
  it('an unknown method lists the methods the application declares', async () => {
    const res = await user.run(['call', 'fetch', '--context', ctx]);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/^hearth: FunctionCallError: .*the application has no method "fetch"; its methods: set, get, entries, len, remove, clear, get_result, get_unchecked\n$/);
  });

  it('an argument-shape failure shows the arguments the method expects', async () => {
    const res = await user.run(['call', 'set', '--context', ctx, '--args', '{"key":"only"}']);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/missing field `value`.*; set expects --args \{"key": string, "value": string\}\n$/);
    // a failure of the method itself is not about its arguments: no hint
    const appErr = await user.run(['call', 'get_result', '--context', ctx, '--args', '{"key":"missing"}']);
    expect(appErr.stderr).not.toContain('expects --args');
  });
});

describe('a raw .wasm handed to an install', { timeout: 120_000 }, () => {
  it('is refused naming hearth app bundle, by install-dev, install, and the node itself', async () => {
    const wasm = join(user.root, 'app.wasm');
    await writeFile(wasm, tinyWasm());
    for (const args of [['app', 'install-dev', wasm], ['app', 'install', wasm]]) {
      const res = await user.run(args);
      expect(res.code, args.join(' ')).toBe(2);
      expect(res.stderr).toContain('hearth app bundle --wasm <file>');
    }
    const mpk = await user.run(['app', 'install', 'kv.mpk']);
    expect(mpk.code).toBe(2);
    expect(mpk.stderr).toContain('install it with hearth app install-dev kv.mpk');
    expect((await sdk.applications.list()).map((a) => a.id).sort()).toEqual([appId, bare].sort());
  });
});

describe('shell completion', { timeout: 120_000 }, () => {
  const complete = async (...words: string[]) => {
    const res = await user.run(['__complete', '--', ...words], { bare: true });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).toBe('');
    return res.stdout.split('\n').filter(Boolean);
  };
  const connect = () => ['--home', user.root, '--node', node.url];

  it('prints a bash script that parses and a zsh script that registers itself; other shells are refused', async () => {
    const bash = await user.run(['completion', 'bash'], { bare: true });
    expect(bash.code).toBe(0);
    expect(bash.stdout).toContain('complete -o default -F _hearth_complete hearth');
    execFileSync('bash', ['-n'], { input: bash.stdout }); // throws on a syntax error
    const zsh = (await user.run(['completion', 'zsh'], { bare: true })).stdout;
    expect(zsh).toMatch(/^#compdef hearth\n/);
    expect(zsh).toContain('compdef _hearth_complete hearth');
    const fish = await user.run(['completion', 'fish'], { bare: true });
    expect(fish.code).toBe(2);
  });

  it('completes commands, subcommands, options and --output values', async () => {
    expect(await complete('con')).toEqual(['config', 'context']);
    expect(await complete('app', 'me')).toEqual(['methods']);
    expect(await complete('app', 'methods', '--ser')).toEqual(['--service']);
    expect(await complete('call', 'get', '--output', '')).toEqual(['table', 'plain', 'json']);
    // the hidden command lists itself nowhere
    expect(await complete('')).not.toContain('__complete');
    expect(await complete('')).toEqual(expect.arrayContaining(['app', 'call', 'context', 'completion']));
  });

  it("completes the node's ids and aliases where a command takes them", async () => {
    await sdk.aliases.create('context', 'kv-ctx', ctx).catch(() => undefined);
    expect((await complete('app', 'methods', ...connect(), '')).sort()).toEqual(['kv', appId, bare].sort());
    expect(await complete('app', 'methods', ...connect(), appId.slice(0, 5))).toEqual([appId]);
    expect(await complete('call', 'get', ...connect(), '--context', '')).toEqual(['kv-ctx', ctx]);
  });

  it('stays quiet offline', async () => {
    expect(await complete('app', 'methods', '--home', user.root, '--node', 'http://127.0.0.1:9', '')).toEqual([]);
  });
});
