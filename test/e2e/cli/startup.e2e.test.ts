/**
 * Start-up failures that explain themselves (issue #25 §1): a second node on a home in use is one
 * line naming the running node (the second `npm start` in the same clone); a taken swarm port is
 * one line saying what to pass; `--port` alone on a development node takes a free swarm port; a
 * lock left by a killed node is taken over, saying so, and a stopped node leaves none; logs are
 * JSON off a terminal and human lines with `--log-format human`.
 */
import { spawn } from 'node:child_process';
import { access, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { freePortRun } from '../../helpers/cluster.ts';
import { ADMIN_PASSWORD, ADMIN_USER, HEARTH_BIN, ROOT, runCli, spawnNode, type SpawnedNode } from '../../helpers/node.ts';

let root: string;
let base: number;
const started: SpawnedNode[] = [];
const env = { MERO_AUTH_ADMIN_USER: ADMIN_USER, MERO_AUTH_ADMIN_PASSWORD: ADMIN_PASSWORD };

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'hearth-startup-'));
  base = await freePortRun(4);
});
afterAll(async () => {
  for (const n of started) if (n.child.exitCode === null) n.child.kill('SIGKILL');
  await rm(root, { recursive: true, force: true });
});

async function start(args: string[]): Promise<SpawnedNode> {
  const n = await spawnNode([...args, '--home', root], env);
  started.push(n);
  return n;
}

/** `hearth <args> --output json` exactly as given; resolves once it listens. */
function startAsTyped(args: string[]): Promise<SpawnedNode> {
  const child = spawn(process.execPath, [HEARTH_BIN, ...args, '--output', 'json'], { cwd: ROOT, env: { ...process.env, HEARTH_LOG: 'warn', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const seen = () => {
      const line = out.split('\n').find((l) => l.startsWith('{"event":"listening"'));
      if (line) resolve({ child, url: (JSON.parse(line) as { url: string }).url, output: () => out, exited });
    };
    child.stdout.on('data', (c: Buffer) => ((out += c.toString()), seen()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    void exited.then((code) => reject(new Error(`exited with ${code}: ${out}`)));
  }).then((n) => (started.push(n as SpawnedNode), n as SpawnedNode));
}

const stop = async (n: SpawnedNode, signal: NodeJS.Signals = 'SIGTERM') => {
  n.child.kill(signal);
  await n.exited;
};

it('refuses a second node on a home in use with one line naming the running node', { timeout: 90_000 }, async () => {
  const first = await start(['dev', '--node', 'a', '--port', String(base), '--swarm-port', String(base + 1000)]);
  const lock = JSON.parse(await readFile(join(root, 'a', 'node.lock'), 'utf8')) as { pid: number; url: string };
  expect(lock).toMatchObject({ pid: first.child.pid, url: `http://127.0.0.1:${base}` });

  // what a second `npm start` (hearth dev) in the same clone does
  const second = await runCli(['dev', '--node', 'a', '--home', root], env);
  expect(second.code).toBe(1);
  expect(second.stdout).toBe('');
  expect(second.stderr).toBe(`hearth: home ${join(root, 'a')} is in use by a running node (pid ${first.child.pid}, http://127.0.0.1:${base}); a second node needs a home of its own: add --node <name>\n`);
  // `hearth run` and `hearth init --force` on it are refused the same way; the home is untouched
  const run = await runCli(['run', '--node', 'a', '--home', root, '--port', String(base + 3)], env);
  expect(run.stderr).toMatch(/^hearth: home .* is in use by a running node \(pid \d+, http:\/\/127\.0\.0\.1:\d+\); a second node needs a home of its own: add --node <name>\n$/);
  const init = await runCli(['init', '--node', 'a', '--home', root, '--force']);
  expect(init.code).toBe(1);
  expect(init.stderr).toContain('is in use by a running node');
  expect((await fetch(`http://127.0.0.1:${base}/admin-api/health`)).status).toBe(200);

  // the same swarm port from another home: one line, no libp2p wording
  const swarm = await runCli(['dev', '--node', 'b', '--home', root, '--port', String(base + 1), '--swarm-port', String(base + 1000)], env);
  expect(swarm.code).toBe(1);
  expect(swarm.stderr).toBe(`hearth: swarm port ${base + 1000} is in use: pass --swarm-port <port> or 0 for any\n`);
  // a `run` whose configured swarm port is taken says the same
  expect((await runCli(['init', '--node', 'c', '--home', root, '--swarm-port', String(base + 1000)])).code).toBe(0);
  const configured = await runCli(['run', '--node', 'c', '--home', root, '--port', String(base + 1)], env);
  expect(configured.stderr).toBe(`hearth: swarm port ${base + 1000} is in use: pass --swarm-port <port> or 0 for any\n`);

  // a development node whose HTTP and swarm ports are both taken: one line with the one command that works
  expect((await runCli(['init', '--dev', '--node', 'e', '--home', root, '--server-port', String(base), '--swarm-port', String(base + 1000)])).code).toBe(0);
  const both = await runCli(['dev', '--node', 'e', '--home', root], env);
  expect(both.code).toBe(1);
  expect(both.stderr).toMatch(new RegExp(`^hearth: ports ${base} and ${base + 1000} are in use: start this node with --port (\\d+) \\(a development node given --port takes any free swarm port\\)\n$`));

  // --port alone on a development node whose swarm port is taken: it takes a free one
  expect((await runCli(['init', '--dev', '--node', 'd', '--home', root, '--swarm-port', String(base + 1000)])).code).toBe(0);
  // (spawnNode adds --swarm-port 0 unless one is named: this runs `hearth dev` exactly as typed)
  const d = await startAsTyped(['dev', '--node', 'd', '--port', String(base + 2), '--home', root]);
  expect(d.output()).toContain(`hearth: swarm port ${base + 1000} is in use; this development node takes any free one`);
  expect((await fetch(`${d.url}/admin-api/health`)).status).toBe(200);
  await stop(d);
  await stop(first);
});

it('takes over the lock of a killed node, saying so, and a stopped node leaves none', { timeout: 90_000 }, async () => {
  const killed = await start(['dev', '--node', 'k', '--port', String(base + 3)]);
  await stop(killed, 'SIGKILL');
  const lockFile = join(root, 'k', 'node.lock');
  expect(JSON.parse(await readFile(lockFile, 'utf8')).pid).toBe(killed.child.pid);
  const again = await start(['dev', '--node', 'k', '--port', String(base + 3)]);
  expect(again.output()).toContain(`was locked by pid ${killed.child.pid}, which is no longer running; taking the lock over`);
  expect((await fetch(`${again.url}/admin-api/health`)).status).toBe(200);
  await stop(again);
  expect(again.child.signalCode).toBeNull(); // it stopped through its own handler (exit 0), not by the signal's default
  await expect(access(lockFile)).rejects.toThrow();
});

it('logs JSON lines off a terminal and human lines with --log-format human', { timeout: 90_000 }, async () => {
  const json = await start(['dev', '--node', 'l', '--port', String(base + 3), '--log-level', 'info']);
  await stop(json);
  const jsonLog = json.output().split('\n').filter((l) => l.includes('network: listening'));
  expect(jsonLog.length).toBe(1);
  expect(JSON.parse(jsonLog[0]!)).toMatchObject({ level: 30, msg: 'network: listening' });

  const human = await start(['dev', '--node', 'l', '--port', String(base + 3), '--log-level', 'info', '--log-format', 'human']);
  await stop(human);
  const line = human.output().split('\n').find((l) => l.includes('network: listening'));
  expect(line).toMatch(/^\d\d:\d\d:\d\d INFO  network: listening {2}peerId=12D3KooW\S+ addresses=\[/);
});
