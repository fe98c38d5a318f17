/**
 * Every expected failure of the command line is one line naming the cause and what to do, with a
 * non-zero exit and no stack trace unless `--verbose` (issue #16): the port in use, a missing
 * file, a bad config value, an unreachable node, a refused login, and a closed output pipe.
 */
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HEARTH_BIN, ROOT, runCli, startTestNode, type TestNode } from '../../helpers/node.ts';

const NO_ADMIN_ENV = { MERO_AUTH_ADMIN_USER: '', MERO_AUTH_ADMIN_PASSWORD: '', MERO_AUTH_ADMIN_PASSWORD_FILE: '', HEARTH_NODE: '', HEARTH_PROFILE: '' };
const STACK = /^\s+at /m;

let root: string;
let node: TestNode;
let busy: Server;
let busyPort: number;

/** The whole of stderr is one line, starting `hearth: `. */
function oneLine(stderr: string): string {
  expect(stderr, stderr).toMatch(/^hearth: [^\n]+\n$/);
  expect(stderr).not.toMatch(STACK);
  return stderr;
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'hearth-cli-errors-'));
  node = await startTestNode();
  busy = createServer();
  await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
  busyPort = (busy.address() as AddressInfo).port;
  expect((await runCli(['init', '--home', root, '--node', 'plain', '--server-port', '0'], NO_ADMIN_ENV)).code).toBe(0);
});
afterAll(async () => {
  await new Promise((resolve) => busy?.close(resolve));
  await node?.destroy();
  await rm(root, { recursive: true, force: true });
});

describe('one clear line per failure', () => {
  it('a port in use names the port and the way out (exit 1)', async () => {
    // `--swarm-port 0`: with the default 2428 taken (a node already running on this machine) a
    // development node says it takes another one, a second line this test is not about
    const res = await runCli(['dev', '--home', root, '--node', 'busy', '--port', String(busyPort), '--swarm-port', '0'], { ...NO_ADMIN_ENV, HEARTH_LOG: 'silent' });
    expect(res.code).toBe(1);
    expect(oneLine(res.stderr)).toBe(`hearth: port ${busyPort} is in use on 127.0.0.1 (another hearth node?): stop that process, or start this one with --port <n>\n`);
  });

  it('a missing file names the file and the reason (exit 2)', async () => {
    const env = await runCli(['dev', '--home', root, '--node', 'envfile'], { ...NO_ADMIN_ENV, MERO_AUTH_ADMIN_PASSWORD_FILE: '/nonexistent/admin-pw' });
    expect(env.code).toBe(2);
    expect(oneLine(env.stderr)).toBe('hearth: cannot read MERO_AUTH_ADMIN_PASSWORD_FILE /nonexistent/admin-pw: no such file or directory\n');
    const flag = await runCli(['login', '--url', node.url, '--home', root, '--username', 'dev', '--password-file', '/nonexistent/pw']);
    expect(flag.code).toBe(2);
    expect(oneLine(flag.stderr)).toBe('hearth: cannot read password file /nonexistent/pw: no such file or directory\n');
    const upload = await runCli(['blob', 'upload', '/nonexistent/file.bin', '--url', node.url, '--home', root]);
    expect(upload.code).toBe(2);
    expect(oneLine(upload.stderr)).toBe('hearth: cannot read /nonexistent/file.bin: no such file or directory\n');
  });

  it('a bad config value names the file, the key and the fix (exit 2)', async () => {
    const typed = join(root, 'typed');
    expect((await runCli(['init', '--home', root, '--node', 'typed'], NO_ADMIN_ENV)).code).toBe(0);
    await writeFile(join(typed, 'config.toml'), '[server]\nport = "eighty"\n');
    const res = await runCli(['run', '--home', root, '--node', 'typed'], NO_ADMIN_ENV);
    expect(res.code).toBe(2);
    expect(oneLine(res.stderr)).toBe(
      `hearth: ${join(typed, 'config.toml')}: server.port must be a number; fix the file, or set the key with: hearth config set <key> <value>\n`,
    );
    await writeFile(join(typed, 'config.toml'), '[server]\nport = \n');
    const syntax = await runCli(['config', 'get', '--home', root, '--node', 'typed'], NO_ADMIN_ENV);
    expect(syntax.code).toBe(2);
    expect(oneLine(syntax.stderr)).toMatch(/^hearth: \S+config\.toml line 2, column \d+: not valid TOML \(invalid value\); fix the file\n$/);
  });

  it('an unreachable node says so and how to start one (exit 1)', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const res = await runCli(['health', '--url', `http://127.0.0.1:${port}`, '--home', root]);
    expect(res.code).toBe(1);
    expect(oneLine(res.stderr)).toBe(
      `hearth: cannot reach http://127.0.0.1:${port} (connection refused); is the node running? start one with: hearth dev (or pass --node <url|name>)\n`,
    );
  });

  it('a refused login says "Authentication failed" once and what to check (exit 3)', async () => {
    const res = await runCli(['login', '--url', node.url, '--home', root, '--username', node.adminUser, '--password-stdin'], {}, { input: 'not-the-password\n' });
    expect(res.code).toBe(3);
    expect(oneLine(res.stderr)).toBe('hearth: Authentication failed: Invalid username or password (HTTP 401); check the username and password\n');
  });

  it('a reader that closes the pipe (| head) ends the command with one line and the broken-pipe status', async () => {
    const child = spawn(process.execPath, [HEARTH_BIN, 'config', 'get', '--home', root, '--node', 'plain'], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.destroy(); // the reader is gone before the first line
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(code).toBe(141);
    expect(oneLine(stderr)).toBe('hearth: stopped writing: the reader of the output closed it (broken pipe)\n');
  });

  it('--verbose adds the stack trace after the line', async () => {
    const res = await runCli(['health', '--url', 'http://127.0.0.1:1', '--home', root, '--verbose']);
    expect(res.code).toBe(1);
    const [first, ...rest] = res.stderr.trimEnd().split('\n');
    expect(first).toMatch(/^hearth: cannot reach http:\/\/127\.0\.0\.1:1 /);
    expect(rest.join('\n')).toMatch(STACK);
  });

  it('with --output json the failure is one JSON object', async () => {
    const res = await runCli(['health', '--url', 'http://127.0.0.1:1', '--home', root, '--output', 'json']);
    expect(res.code).toBe(1);
    expect(res.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(JSON.parse(res.stderr)).toMatchObject({ exitCode: 1, error: expect.stringContaining('cannot reach'), hint: expect.stringContaining('hearth dev') });
  });
});
