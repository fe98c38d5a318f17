/**
 * CLI consistency (issue #16): `hearth dev` with no credentials generates an admin password, prints
 * it once and keeps it 0600 in the node's home; `--node NAME` finds the port the node really
 * listens on and takes `--port` / `--url` overrides; `--output` works in any position; events and
 * byte fields print as text (or `--raw`).
 */
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, MemoryTokenStore } from '../../../src/client/index.ts';
import { decodeByteFields } from '../../../src/cli/output.ts';
import { runCli, spawnNode, type SpawnedNode } from '../../helpers/node.ts';

const NO_ADMIN_ENV = { MERO_AUTH_ADMIN_USER: '', MERO_AUTH_ADMIN_PASSWORD: '', MERO_AUTH_ADMIN_PASSWORD_FILE: '', HEARTH_NODE: '', HEARTH_PROFILE: '' };

let root: string;
let dev: SpawnedNode;
let listening: Record<string, any>;

/** The JSON "listening" line a spawned node printed. */
const listeningLine = (n: SpawnedNode) =>
  JSON.parse(
    n
      .output()
      .split('\n')
      .find((l) => l.includes('"event":"listening"'))!,
  );

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'hearth-cli-consistency-'));
  expect((await runCli(['init', '--home', root, '--dev', '--server-port', '0'], NO_ADMIN_ENV)).code).toBe(0);
  dev = await spawnNode(['dev', '--home', root], NO_ADMIN_ENV);
  listening = listeningLine(dev);
}, 60_000);
afterAll(async () => {
  dev?.child.kill('SIGTERM');
  await dev?.exited;
  await rm(root, { recursive: true, force: true });
});

describe('hearth dev without credentials', () => {
  it('generates an admin password, prints it and keeps it in the home (mode 0600)', async () => {
    const file = join(root, 'default', 'admin-password');
    expect(listening.admin).toEqual({ username: 'dev', passwordFile: file, password: expect.stringMatching(/^[A-Za-z0-9_-]{24}$/) });
    expect(listening.dashboard).toBe(`${listening.url}/admin-dashboard/`);
    expect((await readFile(file, 'utf8')).trim()).toBe(listening.admin.password);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const c = createClient({ baseUrl: listening.url, tokenStore: new MemoryTokenStore() });
    await c.auth.login({ username: 'dev', password: listening.admin.password });
    // the password file works for the CLI's login as it is
    const login = await runCli(['login', '--home', root, '--node', 'default', '--username', 'dev', '--password-file', file], NO_ADMIN_ENV);
    expect(login.code, login.stderr).toBe(0);
  });

  it('keeps the password across restarts and prints only where it is', async () => {
    dev.child.kill('SIGTERM');
    expect(await dev.exited).toBe(0);
    dev = await spawnNode(['dev', '--home', root], NO_ADMIN_ENV);
    const again = listeningLine(dev);
    expect(again.admin).toEqual({ username: 'dev', passwordFile: join(root, 'default', 'admin-password') });
    listening = again;
  });

  it('with credentials from the environment, writes no password file', async () => {
    const other = await spawnNode(['dev', '--home', root, '--node', 'envadmin', '--port', '0'], { ...NO_ADMIN_ENV, MERO_AUTH_ADMIN_USER: 'ops', MERO_AUTH_ADMIN_PASSWORD: 'ops-password' });
    try {
      expect(listeningLine(other).admin).toEqual({ username: 'ops', passwordFile: null });
      await expect(stat(join(root, 'envadmin', 'admin-password'))).rejects.toMatchObject({ code: 'ENOENT' });
    } finally {
      other.child.kill('SIGTERM');
      await other.exited;
    }
  });
});

describe('which node a command talks to', () => {
  it('--node NAME finds the port the node listens on (not the configured 0), and --port / --url override it', async () => {
    const port = new URL(listening.url).port;
    const byName = await runCli(['health', '--home', root, '--node', 'default', '--output', 'json'], NO_ADMIN_ENV);
    expect(byName.code, byName.stderr).toBe(0);
    expect(JSON.parse(byName.stdout)).toMatchObject({ node: listening.url, ok: true });
    const overridden = await runCli(['health', '--home', root, '--node', 'default', '--port', '1', '--output', 'json'], NO_ADMIN_ENV);
    expect(overridden.code).toBe(1);
    expect(JSON.parse(overridden.stderr).error).toContain('http://127.0.0.1:1');
    const url = await runCli(['health', '--home', root, '--node', 'nowhere', '--url', `http://127.0.0.1:${port}`], NO_ADMIN_ENV);
    expect(url.code, url.stderr).toBe(0);
    expect(url.stdout).toBe(`http://127.0.0.1:${port}: health alive, ready\n`);
  });
});

describe('--output in any position', () => {
  beforeAll(async () => {
    // the node restarted on another port: log the profile in to it again
    const login = await runCli(['login', '--home', root, '--node', 'default', '--username', 'dev', '--password-file', join(root, 'default', 'admin-password')], NO_ADMIN_ENV);
    expect(login.code, login.stderr).toBe(0);
  });

  it.each([
    [['--output', 'json', 'key', 'list']],
    [['key', '--output', 'json', 'list']],
    [['key', 'list', '--output', 'json']],
    [['key', 'list', '--output=json']],
  ])('hearth %j prints JSON', async (args) => {
    const res = await runCli([...args, '--home', root, '--node', 'default'], NO_ADMIN_ENV);
    expect(res.code, res.stderr).toBe(0);
    expect(JSON.parse(res.stdout)).toEqual([expect.objectContaining({ public_key: 'dev', permissions: ['admin'] })]);
  });

  it('refuses an unknown format naming the choices, and takes "human" as the older name of "table"', async () => {
    const bad = await runCli(['key', 'list', '--output', 'yaml', '--home', root, '--node', 'default'], NO_ADMIN_ENV);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('must be one of table, plain, json');
    const human = await runCli(['key', 'list', '--output', 'human', '--home', root, '--node', 'default'], NO_ADMIN_ENV);
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toMatch(/^KEY ID\s+PUBLIC KEY/);
  });
});

describe('byte fields', () => {
  it('are text when printable UTF-8, hex for ids, and left alone elsewhere; --raw keeps the bytes', () => {
    const frame = {
      contextId: 'c'.repeat(64),
      type: 'StateMutation',
      data: { newRoot: 'r', events: [{ kind: 'Inserted', data: [...Buffer.from('{"k":"v"}')], handler: null }, { kind: 'Blob', data: [0xff, 0x00], handler: null }] },
    };
    expect(decodeByteFields(frame)).toEqual({
      ...frame,
      data: { newRoot: 'r', events: [{ kind: 'Inserted', data: '{"k":"v"}', handler: null }, { kind: 'Blob', data: '0xff00', handler: null }] },
    });
    const invitation = { invitation: { inviter_identity: Array(32).fill(171), group_id: Array(32).fill(1), secret_salt: [1, 2], invited_role: 1, admitters: [] }, inviter_signature: 'sig' };
    expect(decodeByteFields(invitation)).toEqual({
      invitation: { inviter_identity: 'ab'.repeat(32), group_id: '01'.repeat(32), secret_salt: '0102', invited_role: 1, admitters: [] },
      inviter_signature: 'sig',
    });
  });
});
