/**
 * `hearth workflow run` (issue #36), end to end: real `hearth` processes from the built dist run
 * merobox-format workflows of our own (test/fixtures/workflows/) on local nodes they start and
 * stop: the acceptance scenario (two nodes, a raw `.wasm` dev install, namespace, context,
 * invitation, join, a write on node 1, wait_for_sync, a read and an assert on node 2), the same
 * with an assert that cannot hold, most step types on three nodes, a step expected to fail that
 * succeeds, a node killed mid-run, Ctrl-C, and files refused before any node starts.
 */
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp } from '../../helpers/wasm-apps.ts';
import { tail, unreachable, workflow, workflowDir } from '../../helpers/workflow.ts';

let dir: string;

beforeAll(async () => {
  dir = await workflowDir();
  await writeFile(join(dir, 'kv_store.wasm'), await buildTestApp('kv_store'));
}, 120_000);
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('hearth workflow run', () => {
  it('runs the acceptance workflow on two nodes: exit 0, steps, exported values and a summary', { timeout: 180_000 }, async () => {
    const started = Date.now();
    const run = await workflow([join(dir, 'kv-two-nodes.yml')]);
    // the goal is under 20 s; measured here for the report, never asserted (bench/ holds timings)
    console.log(`acceptance workflow: ${((Date.now() - started) / 1000).toFixed(1)} s`);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('note: ignoring nodes.image, nodes.chain_id: container settings');
    expect(run.stdout.match(/dev: true with a raw \.wasm: the runner bundles it/g)).toHaveLength(1);
    expect(run.stdout).toContain('Executing Read on node 2 (call) [step 10 on calimero-node-2]...');
    expect(run.stdout).toContain('📝 read_back = hello from node 1');
    expect(run.stdout).toContain("✓ Step 'Check on node 2' completed");
    expect(run.stdout).toMatch(/summary: 11 steps passed, 0 failed on 2 nodes in [\d.]+ s/);
    const urls = [...run.stdout.matchAll(/calimero-node-\d (http:\/\/127\.0\.0\.1:\d+)/g)].map((m) => m[1]!);
    expect(urls).toHaveLength(2);
    await unreachable(urls);
  });

  it('exits non-zero naming the step whose assert cannot hold (--output json)', { timeout: 180_000 }, async () => {
    const text = (await readFile(join(dir, 'kv-two-nodes.yml'), 'utf8')).replace('== hello from node 1', '== goodbye');
    await writeFile(join(dir, 'kv-wrong.yml'), text);
    const run = await workflow([join(dir, 'kv-wrong.yml'), '--output', 'json']);
    expect(run.code).toBe(1);
    const summary = JSON.parse(run.stdout);
    expect(summary).toMatchObject({ ok: false, failed: { step: '11', name: 'Check on node 2', type: 'assert', status: 'failed' } });
    expect(summary.failed.error).toBe("{{read_back}} == goodbye failed (left='hello from node 1', right='goodbye')");
    expect(summary.steps.filter((s: { status: string }) => s.status === 'passed')).toHaveLength(10);
    expect(summary.exported.read_back).toBe('hello from node 1');
    const error = JSON.parse(run.stderr.trim().split('\n').pop()!);
    expect(error).toMatchObject({ exitCode: 1 });
    expect(error.error).toMatch(/^workflow step 11 "Check on node 2" \(assert\) failed: /);
    await unreachable(summary.nodes.map((n: { url: string }) => n.url));
  });

  it('runs most step types on three nodes', { timeout: 300_000 }, async () => {
    const run = await workflow([join(dir, 'many-steps.yml'), '--output', 'json']);
    expect(run.code, tail(run)).toBe(0);
    const summary = JSON.parse(run.stdout);
    const types = new Set(summary.steps.map((s: { type: string }) => s.type));
    for (const t of ['install_application', 'parallel', 'create_namespace', 'create_context', 'create_namespace_invitation', 'join_namespace', 'invite_open', 'join_group', 'join_context', 'create_identity', 'repeat', 'call', 'wait_for_sync', 'json_assert', 'assert', 'script', 'upload_blob', 'download_blob', 'create_group_in_namespace', 'list_namespace_groups', 'list_group_members', 'get_group_info', 'set_member_capabilities', 'get_member_capabilities', 'set_subgroup_visibility', 'set_group_metadata', 'get_group_metadata', 'leave_context', 'wait']) {
      expect(types, t).toContain(t);
    }
    expect(summary.exported).toMatchObject({ all: { k1: 'v0', k2: 'v1', k3: 'v2' }, err_type: 'FunctionCallError', caps: 5, meta_name: 'kv', member_count: 3, blob_size: 29 });
    expect(summary.steps.find((s: { name: string }) => s.name === 'A missing key is an application error').status).toBe('expected_failure');
    // the repeat's nested steps, named with their iteration
    expect(summary.steps.filter((s: { name: string }) => /^Set key [123]$/.test(s.name)).map((s: { step: string }) => s.step)).toEqual(['11.1.1', '11.2.1', '11.3.1']);
    expect(run.events.find((e) => e.event === 'progress' && /Iteration 2\/3/.test(e.text))).toBeDefined();
  });

  it('runs group administration, metadata, status and deletion steps on two nodes', { timeout: 180_000 }, async () => {
    const run = await workflow([join(dir, 'admin-steps.yml'), '--output', 'json']);
    expect(run.code, tail(run)).toBe(0);
    const summary = JSON.parse(run.stdout);
    expect(summary.steps.every((s: { status: string }) => s.status === 'passed')).toBe(true);
    expect(summary.exported).toMatchObject({ member_name: 'second', room: 'lobby', upgrade: null, left: [], first_version: '0.0.0' });
    expect(summary.exported.child).toBe(summary.exported.sub2);
  });

  it('fails a step expected to fail that succeeds', { timeout: 120_000 }, async () => {
    const run = await workflow([join(dir, 'unexpected-success.yml')]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^hearth: workflow step 1 "This works" \(create_identity\) failed: expected this step to fail \(expected_failure: true\), but it succeeded/m);
  });

  it('names the node that died mid-run and the step it failed', { timeout: 120_000 }, async () => {
    let pids: Record<string, number> = {};
    const run = await workflow([join(dir, 'node-dies.yml'), '--output', 'json'], (e) => {
      if (e.event === 'nodes') pids = Object.fromEntries(e.nodes.map((n: { name: string; pid: number }) => [n.name, n.pid]));
      if (e.event === 'step' && e.name === 'Hold') process.kill(pids['calimero-node-2']!, 'SIGKILL');
    });
    expect(run.code).toBe(1);
    expect(run.events.find((e) => e.event === 'node_exited')).toMatchObject({ node: 'calimero-node-2', how: 'was killed by SIGKILL' });
    const summary = JSON.parse(run.stdout);
    expect(summary.failed).toMatchObject({ step: '3', name: 'After the crash', type: 'create_identity' });
    expect(summary.failed.error).toContain('node calimero-node-2 was killed by SIGKILL');
    await unreachable(summary.nodes.map((n: { url: string }) => n.url));
  });

  it('stops every node on Ctrl-C', { timeout: 120_000 }, async () => {
    let urls: string[] = [];
    const run = await workflow([join(dir, 'node-dies.yml'), '--output', 'json'], (e, child) => {
      if (e.event === 'nodes') urls = e.nodes.map((n: { url: string }) => n.url);
      if (e.event === 'step' && e.name === 'Hold') child.kill('SIGINT');
    });
    expect(run.code).toBe(130);
    expect(urls).toHaveLength(2);
    await unreachable(urls);
  });

  describe('refuses a file before any node starts, in one line naming the file, the step and the fix', () => {
    const refused = async (name: string, yaml: string) => {
      const file = join(dir, name);
      await writeFile(file, yaml);
      const run = await workflow([file]);
      expect(run.code).toBe(2);
      expect(run.stdout).toBe('');
      const lines = run.stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      return { file, line: lines[0]! };
    };
    const head = 'name: w\nnodes:\n  count: 2\nsteps:\n';

    it('a YAML that does not parse', { timeout: 60_000 }, async () => {
      const { file, line } = await refused('bad.yml', `${head}  - type: wait\n    seconds: [1\n`);
      expect(line).toMatch(new RegExp(`^hearth: ${file}: not valid YAML at line \\d+, column \\d+: .+; fix the YAML syntax there$`));
    });

    it('a missing file', { timeout: 60_000 }, async () => {
      const run = await workflow([join(dir, 'absent.yml')]);
      expect(run.code).toBe(2);
      expect(run.stderr.trim()).toBe(`hearth: cannot read the workflow ${join(dir, 'absent.yml')}: no such file or directory; check the path`);
    });

    it('an unknown step type and an unknown key', { timeout: 60_000 }, async () => {
      const a = await refused('unknown-type.yml', `${head}  - name: Teleport\n    type: teleport\n    node: calimero-node-1\n`);
      expect(a.line).toBe(`hearth: ${a.file}: step 1 "Teleport" (teleport): unknown step type "teleport"; use one of the step types in docs/workflows.md`);
      const b = await refused('unknown-key.yml', `${head}  - type: wait\n    seconds: 1\n    second: 2\n`);
      expect(b.line).toMatch(/step 1 \(wait\): unknown key "second" — the step would ignore it; valid keys: .*seconds/);
    });

    it('a step naming a node that does not exist', { timeout: 60_000 }, async () => {
      const { file, line } = await refused('no-node.yml', `${head}  - name: Who\n    type: create_identity\n    node: calimero-node-3\n`);
      expect(line).toBe(`hearth: ${file}: step 1 "Who" (create_identity): no node "calimero-node-3" in this workflow (it has calimero-node-1, calimero-node-2); name one of them`);
    });

    it('a --nodes-dir that already holds a node home', { timeout: 60_000 }, async () => {
      const homes = join(dir, 'homes');
      await mkdir(join(homes, 'calimero-node-1'), { recursive: true });
      const run = await workflow([join(dir, 'kv-two-nodes.yml'), '--nodes-dir', homes]);
      expect(run.code).toBe(2);
      expect(run.stderr.trim()).toBe(`hearth: --nodes-dir ${homes} already holds a node home (${join(homes, 'calimero-node-1')}); pass an empty or new folder`);
    });

    it('a {{var}} never exported', { timeout: 60_000 }, async () => {
      const { file, line } = await refused('no-var.yml', `${head}  - type: join_context\n    node: calimero-node-2\n    context_id: "{{context_id}}"\n`);
      expect(line).toBe(`hearth: ${file}: step 1 (join_context): {{context_id}} is never exported before this step; export it with outputs: {context_id: <field>} on an earlier step`);
    });
  });
});
