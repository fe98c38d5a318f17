/**
 * The daemon's command line: init, run, admin provisioning, clean shutdown on SIGTERM.
 * Each case runs the real CLI in a child process.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient, MemoryTokenStore } from '../../../src/client/index.ts';
import { runCli, spawnNode } from '../../helpers/node.ts';

const roots: string[] = [];
async function freshRoot(): Promise<string> {
  const r = await mkdtemp(join(tmpdir(), 'hearth-cli-'));
  roots.push(r);
  return r;
}
afterAll(async () => {
  for (const r of roots) await rm(r, { recursive: true, force: true });
});

const NO_ADMIN_ENV = { MERO_AUTH_ADMIN_USER: '', MERO_AUTH_ADMIN_PASSWORD: '', MERO_AUTH_ADMIN_PASSWORD_FILE: '' };

describe('hearth init', () => {
  it('creates the home with config, keys and data dir, and refuses a second init without --force', async () => {
    const home = await freshRoot();
    const first = await runCli(['init', '--home', home, '--node', 'n1', '--server-port', '0', '--output', 'json']);
    expect(first.code).toBe(0);
    expect(JSON.parse(first.stdout.trim())).toMatchObject({ event: 'initialised', home: join(home, 'n1') });
    expect(await readFile(join(home, 'n1', 'config.toml'), 'utf8')).toContain('port = 0');
    expect((await stat(join(home, 'n1', 'node-key.pem'))).isFile()).toBe(true);
    const second = await runCli(['init', '--home', home, '--node', 'n1']);
    expect(second.code).toBe(2);
    expect(second.stderr).toContain('--force');
    expect((await runCli(['init', '--home', home, '--node', 'n1', '--force'])).code).toBe(0);
  });

  it('refuses an admin password outside 8-128 characters, saying so', async () => {
    const home = await freshRoot();
    const res = await runCli(['init', '--home', home, '--admin-user', 'dev', '--admin-password', 'short']);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('at least 8 characters');
  });
});

describe('hearth run', () => {
  it('refuses to start without an admin account and says what to set', async () => {
    const home = await freshRoot();
    expect((await runCli(['init', '--home', home, '--server-port', '0'], NO_ADMIN_ENV)).code).toBe(0);
    const res = await runCli(['run', '--home', home], NO_ADMIN_ENV);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('MERO_AUTH_ADMIN_USER');
    expect(res.stderr).toContain('MERO_AUTH_ADMIN_PASSWORD');
  });

  it('refuses an uninitialised home with a usage error', async () => {
    const res = await runCli(['run', '--home', await freshRoot()]);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('hearth init');
  });

  it('creates the admin from the environment, serves, stops cleanly on SIGTERM and keeps keys across restarts', async () => {
    const home = await freshRoot();
    expect((await runCli(['init', '--home', home, '--server-port', '0'], NO_ADMIN_ENV)).code).toBe(0);
    const env = { MERO_AUTH_ADMIN_USER: 'dev', MERO_AUTH_ADMIN_PASSWORD: 'dev-password' };
    const n1 = await spawnNode(['run', '--home', home], env);
    const c = createClient({ baseUrl: n1.url, tokenStore: new MemoryTokenStore() });
    await c.auth.login({ username: 'dev', password: 'dev-password' });
    await c.auth.createRootKey({ public_key: 'ops', auth_method: 'user_password', provider_data: { username: 'ops', password: 'ops-password' } });
    n1.child.kill('SIGTERM');
    expect(await n1.exited).toBe(0);
    // no admin env this time: the stored account is enough
    const n2 = await spawnNode(['run', '--home', home], NO_ADMIN_ENV);
    const c2 = createClient({ baseUrl: n2.url, tokenStore: new MemoryTokenStore() });
    await c2.auth.login({ username: 'ops', password: 'ops-password' });
    expect((await c2.auth.listRootKeys()).length).toBe(2);
    n2.child.kill('SIGINT');
    expect(await n2.exited).toBe(0);
  });

  it('never writes the admin password or tokens to its output', async () => {
    const home = await freshRoot();
    await runCli(['init', '--home', home, '--server-port', '0'], NO_ADMIN_ENV);
    const n = await spawnNode(['run', '--home', home, '--log-level', 'trace'], { MERO_AUTH_ADMIN_USER: 'dev', MERO_AUTH_ADMIN_PASSWORD: 'secret-password-42' });
    const c = createClient({ baseUrl: n.url, tokenStore: new MemoryTokenStore() });
    const t = await c.auth.login({ username: 'dev', password: 'secret-password-42' });
    // a stream route with the token in the query (the one place a token travels in a URL); the
    // stream stays open, so stop reading once the node answered
    const stream = await fetch(`${n.url}/sse?token=${t.accessToken}`, { signal: AbortSignal.timeout(10_000) });
    await stream.body?.cancel();
    await c.auth.listRootKeys();
    n.child.kill('SIGTERM');
    await n.exited;
    const out = n.output();
    expect(out).toContain('"route"');
    expect(out).not.toContain('secret-password-42');
    expect(out).not.toContain(t.accessToken);
    expect(out).not.toContain(t.accessToken.split('.')[2]);
  });
});
