/**
 * mDNS discovery, tested only where its multicast cannot leave the machine: inside two network
 * namespaces this test creates, joined by a veth pair (198.18.0.0/15, the range set aside for
 * testing network devices), each running hearth network nodes in child processes. Skipped, saying
 * why, where namespaces cannot be created (not root, no `ip`). docs/network.md says what it shows.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const tag = `${process.pid % 100_000}`;
const NS = [`hearth-mdns-${tag}-a`, `hearth-mdns-${tag}-b`] as const;
const VETH = [`hm${tag}a`, `hm${tag}b`] as const;
const subnet = `198.18.${process.pid % 250}`;
const ADDR = [`${subnet}.1`, `${subnet}.2`] as const;

async function ip(...args: string[]): Promise<void> {
  await run('ip', args, { timeout: 10_000 });
}

async function setUp(): Promise<string | undefined> {
  try {
    for (const ns of NS) await ip('netns', 'add', ns);
    await ip('link', 'add', VETH[0], 'type', 'veth', 'peer', 'name', VETH[1]);
    for (const i of [0, 1] as const) {
      await ip('link', 'set', VETH[i], 'netns', NS[i]);
      await ip('-n', NS[i], 'addr', 'add', `${ADDR[i]}/24`, 'dev', VETH[i]);
      await ip('-n', NS[i], 'link', 'set', 'lo', 'up');
      await ip('-n', NS[i], 'link', 'set', VETH[i], 'up');
      await ip('-n', NS[i], 'route', 'add', '224.0.0.0/4', 'dev', VETH[i]); // mDNS's group, on the veth only
    }
    return undefined;
  } catch (err) {
    return (err as Error).message.split('\n')[0];
  }
}

async function tearDown(): Promise<void> {
  for (const ns of NS) await ip('netns', 'del', ns).catch(() => undefined); // takes its veth end along
}

interface Child {
  proc: ChildProcess;
  self: string;
  addresses: string[];
  connected: Set<string>;
}

const children: Child[] = [];

function startChild(ns: string, mdns: 'on' | 'off'): Promise<Child> {
  const proc = spawn('ip', ['netns', 'exec', ns, process.execPath, '--import', 'tsx', join(import.meta.dirname, 'mdns-child.ts'), mdns], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the node in ${ns} did not start`)), 30_000);
    const child: Child = { proc, self: '', addresses: [], connected: new Set() };
    children.push(child);
    proc.once('exit', (code) => reject(new Error(`the node in ${ns} exited with ${code}`)));
    createInterface({ input: proc.stdout! }).on('line', (line) => {
      const msg = JSON.parse(line) as { self?: string; addresses?: string[]; connected?: string };
      if (msg.connected) child.connected.add(msg.connected);
      if (msg.self) {
        Object.assign(child, { self: msg.self, addresses: msg.addresses });
        clearTimeout(timer);
        resolve(child);
      }
    });
  });
}

async function until(check: () => boolean, timeoutMs: number): Promise<boolean> {
  const end = Date.now() + timeoutMs;
  while (!check() && Date.now() < end) await new Promise((r) => setTimeout(r, 100));
  return check();
}

describe('mDNS discovery inside network namespaces', () => {
  /** why namespaces could not be made, when they could not */
  let unavailable: string | undefined;
  let a: Child;
  let b: Child;
  let quiet: Child;

  beforeAll(async () => {
    unavailable = await setUp();
    if (unavailable !== undefined) {
      await tearDown();
      console.warn(`mdns.test.ts skipped: cannot create network namespaces (${unavailable}); mDNS is only tested inside them`);
      return;
    }
    [a, b, quiet] = await Promise.all([startChild(NS[0], 'on'), startChild(NS[1], 'on'), startChild(NS[1], 'off')]);
  }, 60_000);

  afterAll(async () => {
    await Promise.all(
      children.map(
        (c) =>
          new Promise<void>((resolve) => {
            if (c.proc.exitCode !== null) return resolve();
            const kill = setTimeout(() => c.proc.kill('SIGKILL'), 5_000);
            c.proc.once('exit', () => {
              clearTimeout(kill);
              resolve();
            });
            c.proc.kill('SIGTERM');
          }),
      ),
    );
    if (unavailable === undefined) await tearDown();
  }, 30_000);

  const skipUnlessNamespaces = (ctx: { skip: (condition: boolean, note?: string) => void }) =>
    ctx.skip(unavailable !== undefined, `cannot create network namespaces: ${unavailable}`);

  it('expands a wildcard listen address into the namespace interface addresses', (ctx) => {
    skipUnlessNamespaces(ctx);
    expect(a.addresses.some((x) => x.startsWith(`/ip4/${ADDR[0]}/tcp/`))).toBe(true);
    expect(a.addresses.some((x) => x.includes('/0.0.0.0/'))).toBe(false);
  });

  it('connects two nodes with mDNS on, and never finds one with mDNS off', async (ctx) => {
    skipUnlessNamespaces(ctx);
    expect(await until(() => a.connected.has(b.self) && b.connected.has(a.self), 30_000)).toBe(true);
    await new Promise((r) => setTimeout(r, 1_500)); // three more query rounds
    expect(a.connected.has(quiet.self)).toBe(false);
    expect(quiet.connected.size).toBe(0);
  }, 45_000);
});
