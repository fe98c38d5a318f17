/**
 * The command-line path of docs/quick-start.md, command by command (issue #6 "Done when a newcomer,
 * following only the README and docs, can run a node, install an application, create a context,
 * call it, watch its events and manage keys from the CLI"; issue #16 "the first hour"). The
 * browser path is test/browser/dashboard.test.ts. If this test changes, the guide must.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { CliUser } from '../../helpers/cli.ts';
import { HEARTH_BIN, ROOT, startTestNode, type TestNode } from '../../helpers/node.ts';
import { buildTestApp } from '../../helpers/wasm-apps.ts';

let node: TestNode;
let user: CliUser;
let work: string;

beforeAll(async () => {
  node = await startTestNode({ dev: true });
  user = await CliUser.create(node.url);
  work = await mkdtemp(join(tmpdir(), 'hearth-quick-start-'));
  await writeFile(join(work, 'kv.wasm'), await buildTestApp('kv')); // what `npm run example:app` writes
});
afterAll(async () => {
  await rm(work, { recursive: true, force: true });
  await user.destroy();
  await node.destroy();
});

/** `hearth context watch … --count n` in the background; resolves with its stdout when it ends. */
function watch(args: string[]): { ready: Promise<void>; done: Promise<string> } {
  const child = spawn(process.execPath, [HEARTH_BIN, ...args, '--home', user.root, '--node', node.url], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c));
  // In human mode the watch says on stderr when its subscription is in place.
  const ready = new Promise<void>((resolve) => child.stderr.on('data', (c: Buffer) => ((err += c), err.includes('watching') && resolve())));
  const done = new Promise<string>((resolve) => child.on('exit', () => resolve(out)));
  return { ready, done };
}

it('runs the quick start: log in, bundle and install an app, create a context, call it, watch it, manage keys', { timeout: 300_000 }, async () => {
  expect(await user.human(['health'])).toContain('health alive, ready');
  // the password file `hearth dev` keeps (here written by the test: the node was started in-process)
  const passwordFile = join(work, 'admin-password');
  await writeFile(passwordFile, `${node.adminPassword}\n`, { mode: 0o600 });
  await user.human(['login', '--username', node.adminUser, '--password-file', passwordFile]);

  const keygen = await user.run(['app', 'keygen', join(work, 'signing.pem')], { bare: true });
  expect(keygen.code, keygen.stderr).toBe(0);
  const bundled = await user.run(
    ['app', 'bundle', '--wasm', join(work, 'kv.wasm'), '--package', 'com.example.kv', '--version', '1.0.0', '--key', join(work, 'signing.pem'), '--out', join(work, 'kv.mpk')],
    { bare: true },
  );
  expect(bundled.code, bundled.stderr).toBe(0);
  const installed = await user.json(['app', 'install-dev', join(work, 'kv.mpk')]);
  const app: string = installed.applicationId;
  expect(app).toMatch(/^[0-9a-f]{64}$/);
  expect(await user.human(['alias', 'create', 'application', 'kv', '@last'])).toBe(`application alias "kv" → ${app}\n`);
  expect(await user.human(['app', 'list'])).toMatch(/\s+kv\s+com\.example\.kv\s+1\.0\.0/);

  // no id copied: an alias, @last, and (below) a prefix
  const ns: string = (await user.json(['namespace', 'create', '--application', 'kv'])).namespaceId;
  const created = await user.json(['context', 'create', '--application', 'kv', '--group', '@last']);
  const context: string = created.contextId;
  expect(context).toMatch(/^[0-9a-f]{64}$/);
  expect(created.groupId).toBe(ns);
  expect(await user.human(['alias', 'create', 'context', 'kv-main', '@last'])).toBe(`context alias "kv-main" → ${context}\n`);
  expect(await user.human(['context', 'list'])).toMatch(new RegExp(`^${context.slice(0, 12)}\\S*\\s+kv-main\\s+kv\\s`, 'm'));
  expect((await user.json(['context', 'get', context.slice(0, 6)])).id).toBe(context);
  expect(await user.json(['use'])).toEqual([
    { kind: 'context', id: context },
    { kind: 'namespace', id: ns },
    { kind: 'application', id: app },
  ]);

  const watcher = watch(['context', 'watch', 'kv-main', '--count', '1']);
  await watcher.ready;
  expect(await user.human(['call', 'set', '--context', 'kv-main', '--args', '{"key":"greeting","value":"hello"}'])).toBe('set: no return value\n');
  expect(await user.human(['call', 'get', '--context', 'kv-main', '--args', '{"key":"greeting"}'])).toBe('hello\n');
  const line = (await watcher.done).trim();
  expect(line).toContain('context kv-main  StateMutation'); // named by its alias
  expect(line).toContain('Inserted {"key":"greeting","value":"hello"}');

  expect(await user.json(['key', 'list'])).toHaveLength(1);
  await user.human(['key', 'client', 'create', '--permission', 'blob', '--out', join(work, 'client.json')]);
  expect((await stat(join(work, 'client.json'))).mode & 0o777).toBe(0o600);
  expect(await user.json(['key', 'clients'])).toEqual([expect.objectContaining({ name: 'Client - blob' })]);
  expect(await user.json(['logout'])).toMatchObject({ loggedOut: true });
});
