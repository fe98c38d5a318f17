/**
 * Operator CLI, node-level commands (issue #6): login/logout with a 0600 profile, health,
 * identity, peers, profile list, config get|set — in human and JSON output — and exit codes per
 * class of failure.
 */
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CliUser } from '../../helpers/cli.ts';
import { runCli, startTestNode, type TestNode } from '../../helpers/node.ts';

let node: TestNode;
let user: CliUser;

beforeAll(async () => {
  node = await startTestNode();
  user = await CliUser.create(node.url);
});
afterAll(async () => {
  await user.destroy();
  await node.destroy();
});

describe('hearth login / logout', { timeout: 120_000 }, () => {
  it('refuses guarded commands before login with exit 3 and names the next command', async () => {
    const res = await user.run(['identity']);
    expect(res.code).toBe(3);
    // in words, not as the node's missing-token refusal (issue #34 §3)
    expect(res.stderr).toBe('hearth: not logged in: hearth login\n');
    const json = await user.run(['peers', '--output', 'json']);
    expect(json.code).toBe(3);
    expect(JSON.parse(json.stderr)).toMatchObject({ exitCode: 3, status: 401, error: 'not logged in: hearth login' });
  });

  it('refuses a password on argv: there is no such flag, and no password source is a usage error', async () => {
    const argv = await user.run(['login', '--username', node.adminUser, '--password', node.adminPassword]);
    expect(argv.code).toBe(2);
    const none = await user.run(['login', '--username', node.adminUser]);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('--password-stdin');
  });

  it('a wrong password is an auth failure (exit 3) and stores nothing', async () => {
    const res = await user.run(['login', '--username', node.adminUser, '--password-stdin'], { input: 'wrong-password\n' });
    expect(res.code).toBe(3);
    const profiles = await user.profiles();
    expect(profiles.filter((p: { loggedIn: boolean }) => p.loggedIn)).toEqual([]);
  });

  it('logs in once, keeps the tokens in a 0600 profile file, and later commands use them', async () => {
    const out = await user.json(['login', '--username', node.adminUser, '--password-stdin'], { input: `${node.adminPassword}\n` });
    expect(out).toEqual({ profile: 'default', node: node.url, username: node.adminUser });
    const file = join(user.root, 'profiles', 'default.json');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await stat(join(user.root, 'profiles'))).mode & 0o777).toBe(0o700);
    const saved = JSON.parse(await readFile(file, 'utf8'));
    expect(saved.tokens.accessToken).toMatch(/^ey/);

    const identity = await user.json(['identity']);
    expect(identity.accountId).toMatch(/^[0-9a-f]{64}$/);
    expect(identity.service.service).toBeTruthy();
    expect(await user.human(['identity'])).toContain(`account:      ${identity.accountId}`);

    expect(await user.json(['peers'])).toEqual({ count: 0 });
    expect(await user.human(['peers'])).toBe('0 connected peers\n');

    // Without --node the profile's node is used.
    const bare = await user.run(['peers', '--home', user.root, '--output', 'json'], { bare: true });
    expect(bare.code).toBe(0);

    expect(await user.profiles()).toEqual([{ profile: 'default', node: node.url, username: node.adminUser, loggedIn: true }]);
    const table = await user.run(['profile', 'list', '--home', user.root], { bare: true });
    expect(table.stdout).toMatch(/PROFILE\s+NODE\s+USER\s+LOGGED IN\ndefault\s+http/);
  });

  it('logout retires the session on the node and forgets the tokens', async () => {
    const saved = JSON.parse(await readFile(join(user.root, 'profiles', 'default.json'), 'utf8'));
    const out = await user.json(['logout']);
    // A password login holds no client key, so there is nothing to revoke (auth spec rule 5b).
    expect(out).toMatchObject({ profile: 'default', loggedOut: true, revoked: null, problems: [] });
    const after = JSON.parse(await readFile(join(user.root, 'profiles', 'default.json'), 'utf8'));
    expect(after.tokens).toBeUndefined();
    expect(after.node).toBe(node.url);
    // The retired refresh token no longer works on the node.
    const res = await fetch(`${node.url}/auth/refresh`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ access_token: saved.tokens.accessToken, refresh_token: saved.tokens.refreshToken }),
    });
    expect(res.status).toBe(401);
    expect(await user.human(['logout'])).toContain('is not logged in');
    // a command after logout says so in words, not as the node's missing-token refusal
    const after401 = await user.run(['context', 'list']);
    expect(after401.code).toBe(3);
    expect(after401.stderr).toBe('hearth: not logged in: hearth login\n');
    // a password login holds no client key: logout says nothing of one (it said "n/a")
    await user.login(node.adminUser, node.adminPassword);
    expect(await user.human(['logout'])).toBe(`logged out of ${node.url} (profile "default")\n  session ended: yes\n`);
  });
});

describe('hearth health', { timeout: 120_000 }, () => {
  it('needs no login and reports alive and ready in both formats', async () => {
    expect(await user.json(['health'])).toEqual({ node: node.url, health: 'alive', ready: 'ready', ok: true });
    expect(await user.human(['health'])).toBe(`${node.url}: health alive, ready\n`);
  });

  it('an unreachable node is a node error (exit 1) with a hint', async () => {
    const res = await runCli(['health', '--node', 'http://127.0.0.1:1', '--home', user.root, '--timeout', '2000']);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/^hearth: cannot reach http:\/\/127\.0\.0\.1:1 .*; is the node running\? .*\n$/);
    expect(res.stderr).not.toMatch(/at .*\.ts:\d+/); // no stack trace
  });

  it('a parse-time usage error is one JSON object on stderr with --output json', async () => {
    const res = await runCli(['group', 'get', 'xyz', '--output', 'json']);
    expect(res.code).toBe(2);
    expect(JSON.parse(res.stderr)).toEqual({ error: expect.stringContaining('not a group id'), exitCode: 2 });
    const human = await runCli(['group', 'get', 'xyz']);
    expect(human.stderr).toMatch(/^error: .*not a group id/);
  });

  it('a --node that is neither a URL nor a local node home is a usage error', async () => {
    const res = await runCli(['health', '--node', 'nowhere', '--home', user.root]);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('not a URL and no local node home');
  });
});

describe('hearth config', { timeout: 120_000 }, () => {
  const local = () => ['--home', join(node.paths.dir, '..'), '--node', 'test'];

  it('prints one key or all keys, and sets a key atomically with its type checked', async () => {
    const port = await runCli(['config', 'get', 'swarm.port', ...local(), '--output', 'json']);
    expect(port.code).toBe(0);
    expect(JSON.parse(port.stdout)).toEqual({ key: 'swarm.port', value: 0 }); // test homes take any free swarm port
    const all = await runCli(['config', 'get', ...local()]);
    expect(all.stdout).toMatch(/server\.port:\s+0/);

    const set = await runCli(['config', 'set', 'auth.leeway_secs', '7', ...local(), '--output', 'json']);
    expect(set.code).toBe(0);
    expect(JSON.parse(set.stdout)).toMatchObject({ key: 'auth.leeway_secs', value: 7 });
    expect(await readFile(node.paths.config, 'utf8')).toContain('leeway_secs = 7');

    const list = await runCli(['config', 'set', 'server.cors_allowed_origins', 'https://a.example,https://b.example', ...local()]);
    expect(list.code).toBe(0);
    expect(list.stdout).toContain('restart the node to apply it');
    expect(await readFile(node.paths.config, 'utf8')).toContain('"https://a.example"');
  });

  it('refuses unknown keys and mistyped values with exit 2, leaving the file unchanged', async () => {
    const before = await readFile(node.paths.config, 'utf8');
    const unknown = await runCli(['config', 'set', 'server.nope', '1', ...local()]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unknown config key "server.nope"');
    const typed = await runCli(['config', 'set', 'server.port', 'eighty', ...local()]);
    expect(typed.code).toBe(2);
    expect(typed.stderr).toContain('server.port must be an integer');
    expect(await readFile(node.paths.config, 'utf8')).toBe(before);
  });
});
