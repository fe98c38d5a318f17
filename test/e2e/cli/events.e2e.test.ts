/**
 * Operator CLI, `hearth events watch` and `hearth context watch` (issue #6): a watch runs as a
 * child process while the test causes StateMutations through the SDK; frames arrive as one line
 * each (human) or one JSON object per line (NDJSON), `--count` ends the watch, Ctrl-C ends it
 * cleanly, and refusals carry their exit code and the node's message.
 */
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '../../../src/client/index.ts';
import { installTestApp, startCliNode, type CliNode, type CliUser } from '../../helpers/cli.ts';
import { HEARTH_BIN, ROOT, type TestNode } from '../../helpers/node.ts';

let cli: CliNode;
let node: TestNode;
let sdk: Client;
let user: CliUser;
let ctx: string;
let other: string;
let ns: string;

interface Watch {
  stdout(): string;
  stderr(): string;
  exited: Promise<number | null>;
  kill(signal: NodeJS.Signals): void;
}

/** Starts `hearth <args>` as a long-running child of this user (its home and node). */
function watch(args: string[]): Watch {
  const child = spawn(process.execPath, [HEARTH_BIN, ...args, '--home', user.root, '--node', node.url], {
    cwd: ROOT,
    env: { ...process.env, HEARTH_PROFILE: '', HEARTH_NODE: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  return {
    stdout: () => out,
    stderr: () => err,
    exited: new Promise((resolve) => child.on('exit', (code) => resolve(code))),
    kill: (signal) => child.kill(signal),
  };
}

/**
 * Writes to `contextId` every 300 ms until the watch exits: the watch may subscribe after the
 * first writes, so the test keeps causing mutations rather than guessing when it is ready.
 */
async function mutateUntilExit(w: Watch, contextId: string, deadlineMs = 60_000): Promise<number | null> {
  let exited = false;
  const code = w.exited.then((c) => ((exited = true), c));
  const until = Date.now() + deadlineMs;
  for (let i = 0; !exited && Date.now() < until; i++) {
    await sdk.rpc.execute(contextId, 'set', { key: `k${i}`, value: `v${i}` });
    await Promise.race([code, new Promise((r) => setTimeout(r, 300))]);
  }
  if (!exited) {
    w.kill('SIGKILL');
    throw new Error(`the watch did not end in time:\nstdout: ${w.stdout()}\nstderr: ${w.stderr()}`);
  }
  return code;
}

async function waitFor(check: () => boolean, what: string, ms = 60_000): Promise<void> {
  const until = Date.now() + ms;
  while (!check()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

beforeAll(async () => {
  cli = await startCliNode();
  ({ node, sdk, user } = cli);
  const installed = await installTestApp(sdk, 'kv', 'com.hearth.kv');
  const appId = installed.appId;
  ns = installed.ns;
  ctx = (await sdk.contexts.create({ groupId: ns, applicationId: appId })).contextId;
  other = (await sdk.contexts.create({ groupId: ns, applicationId: appId })).contextId;
  await sdk.aliases.create('context', 'watched', ctx);
}, 180_000);
afterAll(() => cli?.destroy());

describe('hearth events watch', { timeout: 120_000 }, () => {
  it('prints each frame as one JSON object per line (NDJSON) and stops after --count', async () => {
    const w = watch(['events', 'watch', '--context', ctx, '--count', '2', '--output', 'json']);
    expect(await mutateUntilExit(w, ctx)).toBe(0);
    const lines = w.stdout().trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    for (const line of lines) {
      const frame = JSON.parse(line);
      expect(frame).toMatchObject({ contextId: ctx, type: 'StateMutation', data: { newRoot: expect.stringMatching(/^[0-9a-f]{64}$/) } });
      const [event] = frame.data.events;
      expect(event.kind).toBe('Inserted');
      expect(JSON.parse(Buffer.from(event.data).toString('utf8'))).toMatchObject({ key: expect.stringMatching(/^k\d+$/) });
    }
    expect(w.stderr()).toBe(''); // notes are for people: JSON mode keeps stderr for failures
  });

  it('watches every context the node holds when none is named; one line per frame for people', async () => {
    const w = watch(['events', 'watch', '--count', '1']);
    expect(await mutateUntilExit(w, other)).toBe(0);
    expect(w.stdout()).toMatch(new RegExp(`^\\S+Z  context ${other.slice(0, 12)}…  StateMutation  root [0-9a-f]{12}…  Inserted \\{"key":"k\\d+","value":"v\\d+"\\}\\n$`));
    expect(w.stderr()).toContain('watching 2 contexts and 0 groups; Ctrl-C to stop');
  });

  it('ends cleanly on Ctrl-C (exit 0)', async () => {
    const w = watch(['events', 'watch', '--context', ctx, '--group', ns]);
    await waitFor(() => w.stderr().includes('watching 1 context and 1 group'), 'the watch to subscribe');
    w.kill('SIGINT');
    expect(await w.exited).toBe(0);
    expect(w.stdout()).toBe('');
  });

  it('refuses a malformed --group at parse time (exit 2) and ids the node does not hold (exit 1, node message)', async () => {
    const bad = await user.run(['events', 'watch', '--group', 'nope']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("option '--group <id>' argument 'nope' is invalid");
    const context = await user.run(['events', 'watch', '--context', 'e'.repeat(64), '--output', 'json']);
    expect(context.code).toBe(1);
    expect(JSON.parse(context.stderr)).toMatchObject({ exitCode: 1, status: 404, error: 'Context not found (HTTP 404)' });
    const group = await user.run(['events', 'watch', '--group', 'e'.repeat(64)]);
    expect(group.code).toBe(1);
    expect(group.stderr).toContain(`hearth: the node keeps none of the requested subscriptions (group ${'e'.repeat(64)})`);
  });
});

describe('hearth context watch', { timeout: 120_000 }, () => {
  it('prints the StateMutation a call causes (context given by alias; human line)', async () => {
    const w = watch(['context', 'watch', 'watched', '--count', '1']);
    expect(await mutateUntilExit(w, ctx)).toBe(0);
    // keys k0, k1, … were written by earlier watches too: a write is Inserted or Updated
    // named by its alias, ids and hashes short (issue #34 §3)
    expect(w.stdout()).toMatch(new RegExp(`^\\S+Z  context watched  StateMutation  root [0-9a-f]{12}…  (Inserted|Updated) \\{"key":"k\\d+","value":"v\\d+"\\}\\n$`));
  });

  it('prints ids in full with --wide', async () => {
    const w = watch(['context', 'watch', 'watched', '--count', '1', '--wide']);
    expect(await mutateUntilExit(w, ctx)).toBe(0);
    expect(w.stdout()).toMatch(new RegExp(`^\\S+Z  context watched  StateMutation  root [0-9a-f]{64}  (Inserted|Updated) `));
  });

  it('prints the frame as JSON with --output json', async () => {
    const w = watch(['context', 'ws', ctx, '--count', '1', '--output', 'json']);
    expect(await mutateUntilExit(w, ctx)).toBe(0);
    expect(JSON.parse(w.stdout())).toMatchObject({ contextId: ctx, type: 'StateMutation', data: { events: [{ kind: expect.stringMatching(/^(Inserted|Updated)$/) }] } });
  });

  it('an unknown context is the node refusal (exit 1), not a silent watch', async () => {
    const res = await user.run(['context', 'watch', 'e'.repeat(64)]);
    expect(res.code).toBe(1);
    expect(res.stderr).toBe('hearth: Context not found (HTTP 404)\n');
  });
});
