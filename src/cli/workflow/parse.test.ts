import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkWorkflow, loadWorkflow, WorkflowFileError } from './parse.ts';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hearth-wf-parse-'));
  await writeFile(join(dir, 'app.wasm'), Buffer.from([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0]));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const base = (steps: unknown[], extra: Record<string, unknown> = {}) => ({ name: 'w', nodes: { count: 2, prefix: 'n', image: 'x', chain_id: 'c' }, steps, ...extra });
const check = (steps: unknown[], extra?: Record<string, unknown>) => checkWorkflow(join(dir, 'w.yml'), base(steps, extra));
const refusal = async (steps: unknown[], extra?: Record<string, unknown>) => {
  const err = await check(steps, extra).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(WorkflowFileError);
  return (err as Error).message;
};

describe('workflow file checks', () => {
  it('accepts a workflow, names its nodes as merobox does and notes the container settings it ignores', async () => {
    const wf = await check([
      { name: 'install', type: 'install_application', node: 'n-1', path: 'app.wasm', dev: true, outputs: { app_id: 'applicationId' } },
      { type: 'create_namespace', node: 'n-2', application_id: '{{app_id}}' },
      { type: 'repeat', count: 2, steps: [{ type: 'wait', seconds: 0, message: 'round {{iteration}}' }] },
      { type: 'assert', statements: ['is_set({{app_id}})', { statement: '{{app_id}} != x', message: 'set' }] },
    ]);
    expect(wf.nodeNames).toEqual(['n-1', 'n-2']);
    expect(wf.waitTimeout).toBe(60);
    expect(wf.notes.join('\n')).toMatch(/nodes\.image, nodes\.chain_id/);
  });

  it('takes secret: true on an output and refuses a secret that is not true or false', async () => {
    await check([{ type: 'script', script: 'app.wasm', outputs: { key: { field: 'stdout', secret: true } } }]);
    expect(await refusal([{ type: 'script', script: 'app.wasm', outputs: { key: { field: 'stdout', secret: 'yes' } } }])).toMatch(/step 1 \(script\): outputs\.key\.secret must be true or false$/);
  });

  it('refuses an unknown step type, naming the file, the step and the fix', async () => {
    const msg = await refusal([{ name: 'Oops', type: 'instal_application', node: 'n-1', path: 'app.wasm' }]);
    expect(msg).toBe(`${join(dir, 'w.yml')}: step 1 "Oops" (instal_application): unknown step type "instal_application"; use one of the step types in docs/workflows.md`);
  });

  it('refuses a key the step would ignore, listing the valid ones', async () => {
    const msg = await refusal([{ type: 'call', node: 'n-1', context_id: 'c', method: 'get', argz: {} }]);
    expect(msg).toMatch(/step 1 \(call\): unknown key "argz" — the step would ignore it; valid keys: args, context_id, /);
  });

  it('takes merobox\'s requester where merobox reads it (a string), and nowhere else', async () => {
    const ns = { type: 'create_namespace', node: 'n-1', application_id: 'a', outputs: { ns: 'namespaceId', me: 'namespaceId' } };
    await check([
      ns,
      { type: 'delete_group', node: 'n-1', group_id: '{{ns}}', requester: '{{me}}' },
      { type: 'delete_context', node: 'n-1', context_id: 'c', requester: 'ab'.repeat(32) },
      { type: 'delete_namespace', node: 'n-1', namespace_id: '{{ns}}', requester: '{{me}}' },
      { type: 'set_member_auto_follow', node: 'n-1', group_id: '{{ns}}', member_id: 'm', auto_follow_contexts: true, auto_follow_subgroups: false, requester: '{{me}}' },
    ]);
    expect(await refusal([{ type: 'delete_group', node: 'n-1', group_id: 'g', requester: 7 }])).toMatch(/requester must be a string/);
    expect(await refusal([{ type: 'leave_namespace', node: 'n-1', namespace_id: 'g', requester: 'x' }])).toMatch(/unknown key "requester"/);
  });

  it('refuses a merobox step hearth does not run, saying why', async () => {
    expect(await refusal([{ type: 'pause_container', container: 'n-1' }])).toMatch(/does not support pause_container \(acts on Docker containers/);
  });

  it('refuses a node that does not exist, also in wait_for_sync and nested steps', async () => {
    expect(await refusal([{ type: 'create_identity', node: 'n-3' }])).toMatch(/step 1 \(create_identity\): no node "n-3" in this workflow \(it has n-1, n-2\); name one of them/);
    expect(await refusal([{ type: 'wait_for_sync', context_id: 'c', nodes: ['n-1', 'calimero-node-2'] }])).toMatch(/no node "calimero-node-2"/);
    expect(await refusal([{ type: 'parallel', groups: [{ name: 'g', steps: [{ type: 'create_identity', node: 'x' }] }] }])).toMatch(/step 1\.g\.1 \(create_identity\): no node "x"/);
  });

  it('refuses a {{var}} no earlier step exports, naming the fix', async () => {
    const msg = await refusal([
      { type: 'create_namespace', node: 'n-1', application_id: '{{app_id}}' },
      { type: 'install_application', node: 'n-1', path: 'app.wasm', outputs: { app_id: 'applicationId' } },
    ]);
    expect(msg).toMatch(/step 1 \(create_namespace\): \{\{app_id\}\} is never exported before this step; export it with outputs: \{app_id: <field>\} on an earlier step$/);
    expect(await refusal([{ type: 'assert', statements: ['is_set({{nothing}})'] }])).toMatch(/\{\{nothing\}\} is never exported/);
  });

  it('keeps what a repeat\'s nested steps export inside the repeat, as merobox does', async () => {
    const msg = await refusal([
      { type: 'repeat', count: 1, steps: [{ type: 'create_identity', node: 'n-1', outputs: { pk: 'publicKey' } }] },
      { type: 'assert', statements: ['is_set({{pk}})'] },
    ]);
    expect(msg).toMatch(/step 2 \(assert\): \{\{pk\}\} is never exported/);
  });

  it('refuses missing required keys, a missing file and malformed step bodies', async () => {
    expect(await refusal([{ type: 'join_namespace', node: 'n-2', invitation: 'x' }])).toMatch(/missing "namespace_id" or "group_id"; add it/);
    expect(await refusal([{ type: 'install_application', node: 'n-1', path: 'nope.wasm', dev: true }])).toMatch(/cannot read path nope\.wasm: no such file or directory/);
    expect(await refusal([{ type: 'wait_for_sync', context_id: 'c', nodes: ['n-1'] }])).toMatch(/at least two different nodes/);
    expect(await refusal([{ type: 'wait_for_sync', context_id: 'c', nodes: ['n-1', 'n-2'], expect: { method: 'get', value: 1 } }])).toMatch(/unknown key\(s\) in expect: value/);
    expect(await refusal([{ type: 'assert', statements: [] }])).toMatch(/statements must be a non-empty list/);
    expect(await refusal([{ type: 'call', node: 'n-1', context_id: 'c', method: 'm', expected_error: 'x' }])).toMatch(/expected_error needs expected_failure: true/);
    expect(await refusal([{ type: 'call', node: 'n-1', context_id: 'c', method: 'm', unauthenticated: true }])).toMatch(/unauthenticated: true is not supported/);
  });

  it('refuses a workflow without steps or nodes, and remote nodes', async () => {
    expect(await refusal([])).toMatch(/steps must be a non-empty list/);
    await expect(checkWorkflow('w.yml', { name: 'w', steps: [{ type: 'wait', seconds: 1 }] })).rejects.toThrow(/missing nodes; add nodes: \{count: 2/);
    expect(await refusal([{ type: 'wait', seconds: 1 }], { remote_nodes: { a: { url: 'http://x' } } })).toMatch(/remote_nodes is not supported/);
  });

  it('names a YAML syntax error with its line, and a file that is not there', async () => {
    const bad = join(dir, 'bad.yml');
    await writeFile(bad, 'name: w\nsteps:\n  - type: wait\n    seconds: [1\n');
    await expect(loadWorkflow(bad)).rejects.toThrow(new RegExp(`^${bad}: not valid YAML at line \\d+, column \\d+: .*; fix the YAML syntax there$`));
    await expect(loadWorkflow(join(dir, 'none.yml'))).rejects.toThrow(/^cannot read the workflow .*none\.yml: no such file or directory; check the path$/);
  });
});
