/**
 * `hearth dev --nodes 3` as a cluster you can break on purpose (issue #25 §2): a node that exits
 * leaves the others running and the supervisor says so; `hearth dev stop | start | restart <node>`
 * act on one node through the supervisor's control endpoint, and a node brought back catches up on
 * what it missed; a second `hearth dev --nodes 3` on the same homes says where the cluster runs;
 * `hearth dev status` lists nodes, URLs, peers and each context's sync state.
 */
import { spawn } from 'node:child_process';
import { access, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { createClient, MemoryTokenStore, type Client } from '../../../src/client/index.ts';
import { makeBundle } from '../../helpers/bundles.ts';
import { eventually, freePortRun } from '../../helpers/cluster.ts';
import { ADMIN_PASSWORD, ADMIN_USER, HEARTH_BIN, ROOT, runCli } from '../../helpers/node.ts';
import { buildTestApp } from '../../helpers/wasm-apps.ts';

let home: string | undefined;
afterAll(async () => {
  if (home) await rm(home, { recursive: true, force: true });
});

const env = { MERO_AUTH_ADMIN_USER: ADMIN_USER, MERO_AUTH_ADMIN_PASSWORD: ADMIN_PASSWORD, HEARTH_LOG: 'warn' };

async function login(url: string): Promise<Client> {
  const c = createClient({ baseUrl: url, tokenStore: new MemoryTokenStore() });
  await c.auth.login({ username: ADMIN_USER, password: ADMIN_PASSWORD });
  return c;
}

const healthy = (url: string) => fetch(`${url}/admin-api/health`).then((r) => r.ok, () => false);

it('keeps the others up, stops and brings back one node, refuses a second cluster, and shows its status', { timeout: 240_000 }, async () => {
  home = await mkdtemp(join(tmpdir(), 'hearth-dev-supervise-'));
  const base = await freePortRun(3);
  const args = ['dev', '--nodes', '3', '--home', home, '--port', String(base), '--swarm-port', String(base + 1000)];
  const child = spawn(process.execPath, [HEARTH_BIN, ...args, '--output', 'json'], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  const hearth = (more: string[]) => runCli([...more, '--home', home!], env);
  try {
    await eventually('the cluster line', async () => out.includes('"event":"cluster"'), 120_000);
    const { nodes } = JSON.parse(out.split('\n').find((l) => l.includes('"event":"cluster"'))!) as { nodes: { node: string; url: string; pid: number }[] };
    const urls = nodes.map((n) => n.url);
    const [a, , c] = await Promise.all(urls.map(login));
    for (const x of [a!, c!]) await eventually('two peers each', async () => (await x.admin.peers()).count === 2, 30_000);

    // a second cluster on the same homes: one line saying where the running one is
    const second = await runCli([...args], env);
    expect(second.code).toBe(1);
    expect(second.stderr.trim().split('\n')).toHaveLength(1);
    expect(second.stderr).toMatch(new RegExp(`^hearth: the development cluster "default" is already running \\(pid ${child.pid}: default-1 http://127\\.0\\.0\\.1:${base}, default-2 http://127\\.0\\.0\\.1:${base + 1}, default-3 http://127\\.0\\.0\\.1:${base + 2}\\); see it with: hearth dev status`));

    // node 3 a member of a namespace of node 1, with a context on node 1
    const bundle = await makeBundle({ wasm: await buildTestApp('kv'), package: 'com.hearth.kv' });
    const app = (await a!.applications.installDev(bundle.path)).applicationId;
    const ns = (await a!.namespaces.create({ applicationId: app })).namespaceId;
    const ctx = (await a!.contexts.create({ groupId: ns, applicationId: app, initializationParams: [] })).contextId;
    const { invitation } = await a!.invitations.inviteToNamespace(ns);
    await c!.invitations.joinNamespace(ns, invitation);

    // stop node 3: the others keep running; node 1 changes the namespace meanwhile
    const stopped = await hearth(['dev', 'stop', '3']);
    expect(stopped.code, stopped.stderr).toBe(0);
    expect(stopped.stdout).toBe('default-3 stopped\n');
    expect(await healthy(urls[2]!)).toBe(false);
    expect(await healthy(urls[0]!)).toBe(true);
    const X = 'ab'.repeat(32);
    await a!.groups.addMembers(ns, [{ identity: X, role: 'Member' }]);
    const again = await hearth(['dev', 'stop', 'default-3']);
    expect(again.code).toBe(2);
    expect(again.stderr).toBe('hearth: default-3 is not running (stopped)\n');

    // status: one row per node and context, the stopped node said so
    const status = await hearth(['dev', 'status', '--output', 'json']);
    expect(status.code, status.stderr).toBe(0);
    const rows = JSON.parse(status.stdout) as { node: string; state: string; url: string; peers: number | null; context: string | null; sync: string | null }[];
    expect(rows.find((r) => r.node === 'default-3')).toMatchObject({ state: 'stopped', url: urls[2], peers: null });
    expect(rows.find((r) => r.node === 'default-1' && r.context === ctx)).toMatchObject({ state: 'running', peers: 1, sync: expect.stringMatching(/^(caught up|behind)/) });
    const table = await hearth(['dev', 'status', '--wide']);
    expect(table.stdout).toMatch(/^NODE\s+STATE\s+URL\s+PEERS\s+CONTEXT\s+SYNC\n/);
    expect(table.stdout).toContain(`default-1  running  ${urls[0]}`);
    // two status reads (and a third below) minted one mock root key per node, kept in its home
    await hearth(['dev', 'status']);
    const mockKeys = (await a!.auth.listRootKeys()).filter((k) => k.auth_method === 'mock_auth');
    expect(mockKeys).toHaveLength(1);

    // start it again: it catches up on the member added while it was away
    const started = await hearth(['dev', 'start', 'default-3']);
    expect(started.code, started.stderr).toBe(0);
    expect(started.stdout).toBe(`default-3 started: ${urls[2]}\n`);
    const c2 = await login(urls[2]!);
    await eventually('node 3 caught up on the new member', async () => (await c2.groups.members(ns)).some((m) => m.identity === X), 60_000);

    // restart one, then kill it from outside: the others keep running, the supervisor says so
    const { stdout: listed } = await hearth(['dev', 'restart', '2', '--output', 'json']);
    const restarted = JSON.parse(listed) as { pid: number; state: string };
    expect(restarted.state).toBe('running');
    process.kill(restarted.pid, 'SIGKILL');
    await eventually('the supervisor says so', async () => err.includes('"event":"exited","node":"default-2"'), 30_000);
    expect(await healthy(urls[0]!)).toBe(true);
    expect(await healthy(urls[2]!)).toBe(true);
    expect(child.exitCode).toBeNull();
  } finally {
    child.kill('SIGINT');
  }
  expect(await exited).toBe(0);
  for (let i = 0; i < 3; i++) expect(await healthy(`http://127.0.0.1:${base + i}`)).toBe(false);
  await expect(access(join(home, 'default.cluster.json'))).rejects.toThrow();
});

it('says plainly when no cluster runs', async () => {
  const empty = await mkdtemp(join(tmpdir(), 'hearth-dev-none-'));
  try {
    const r = await runCli(['dev', 'status', '--home', empty]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`hearth: no development cluster "default" is running under ${empty}: start one with: hearth dev --nodes <n> --home ${empty}\n`);
    // --node names the cluster, for status and for stop/start/restart alike (it was read as "default")
    for (const args of [['dev', 'status', '--node', 'web'], ['dev', 'stop', '2', '--node', 'web']]) {
      const named = await runCli([...args, '--home', empty]);
      expect(named.code).toBe(2);
      expect(named.stderr).toBe(`hearth: no development cluster "web" is running under ${empty}: start one with: hearth dev --nodes <n> --home ${empty}\n`);
    }
  } finally {
    await rm(empty, { recursive: true, force: true });
  }
});
