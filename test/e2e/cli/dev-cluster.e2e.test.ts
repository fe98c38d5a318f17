/**
 * `hearth dev --nodes N` (issue #12 §5): one command starts N node processes on consecutive ports,
 * connected to each other; it prints every node's URL and admin once all listen; a governance change
 * made on one reaches the others; Ctrl-C (SIGINT) stops them all and exits 0.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { createClient, MemoryTokenStore } from '../../../src/client/index.ts';
import { eventually, freePortRun } from '../../helpers/cluster.ts';
import { ADMIN_PASSWORD, ADMIN_USER, HEARTH_BIN, ROOT } from '../../helpers/node.ts';

let home: string | undefined;
afterAll(async () => {
  if (home) await rm(home, { recursive: true, force: true });
});

it('starts connected nodes, prints them, and stops them all on Ctrl-C', { timeout: 120_000 }, async () => {
  home = await mkdtemp(join(tmpdir(), 'hearth-dev-nodes-'));
  const base = await freePortRun(3);
  const child = spawn(process.execPath, [HEARTH_BIN, 'dev', '--nodes', '3', '--home', home, '--port', String(base), '--swarm-port', String(base + 1000), '--output', 'json'], {
    cwd: ROOT,
    env: { ...process.env, MERO_AUTH_ADMIN_USER: ADMIN_USER, MERO_AUTH_ADMIN_PASSWORD: ADMIN_PASSWORD, HEARTH_LOG: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (out += c.toString()));
  try {
    await eventually('the cluster line', async () => out.includes('"event":"cluster"'), 90_000);
    const line = out.split('\n').find((l) => l.includes('"event":"cluster"'))!;
    const { nodes } = JSON.parse(line) as { nodes: { node: string; url: string; swarm: string }[] };
    expect(nodes.map((n) => n.url)).toEqual([0, 1, 2].map((i) => `http://127.0.0.1:${base + i}`));
    expect(nodes[2]!.swarm).toMatch(new RegExp(`^/ip4/127\\.0\\.0\\.1/tcp/${base + 1002}/p2p/12D3KooW`));

    const clients = await Promise.all(
      nodes.map(async (n) => {
        const c = createClient({ baseUrl: n.url, tokenStore: new MemoryTokenStore() });
        await c.auth.login({ username: ADMIN_USER, password: ADMIN_PASSWORD });
        return c;
      }),
    );
    for (const c of clients) await eventually('two peers each', async () => (await c.admin.peers()).count === 2);
    const ns = (await clients[0]!.namespaces.create({ applicationId: 'c'.repeat(64) })).namespaceId;
    const { invitation } = await clients[0]!.invitations.inviteToNamespace(ns);
    const joined = await clients[2]!.invitations.joinNamespace(ns, invitation);
    await eventually('node 1 lists node 3', async () => (await clients[0]!.groups.members(ns)).some((m) => m.identity === joined.memberAccount));
  } finally {
    child.kill('SIGINT');
  }
  expect(await exited).toBe(0);
  // every node is gone with it
  for (let i = 0; i < 3; i++) await expect(fetch(`http://127.0.0.1:${base + i}/admin-api/health`)).rejects.toThrow();
});
