/**
 * Runs `hearth workflow run` (issue #36) from the built dist for the workflow e2e tests
 * (test/e2e/cli/workflow*.e2e.test.ts): collects its output and its `--output json` progress
 * lines, and checks that the nodes a run started are gone afterwards.
 */
import { spawn } from 'node:child_process';
import { copyFile, mkdtemp, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import { HEARTH_BIN, ROOT } from './node.ts';

export const WORKFLOW_FIXTURES = fileURLToPath(new URL('../fixtures/workflows/', import.meta.url));

export interface WorkflowRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** the JSON progress lines of `--output json` (stderr) */
  events: Record<string, any>[];
}

/** A fresh folder holding a copy of every workflow fixture (a test may write its own files beside them). */
export async function workflowDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'hearth-workflow-e2e-'));
  for (const f of await readdir(WORKFLOW_FIXTURES)) await copyFile(join(WORKFLOW_FIXTURES, f), join(dir, f));
  return dir;
}

/** Runs `hearth workflow run <args>`; `onEvent` sees each JSON progress line as it arrives. */
export function workflow(args: string[], onEvent?: (e: Record<string, any>, child: ReturnType<typeof spawn>) => void): Promise<WorkflowRun> {
  const child = spawn(process.execPath, [HEARTH_BIN, 'workflow', 'run', ...args], { cwd: ROOT, env: { ...process.env, HEARTH_LOG: 'warn' }, stdio: ['ignore', 'pipe', 'pipe'] });
  const run: WorkflowRun = { code: null, signal: null, stdout: '', stderr: '', events: [] };
  let partial = '';
  child.stdout!.on('data', (c: Buffer) => (run.stdout += c.toString()));
  child.stderr!.on('data', (c: Buffer) => {
    run.stderr += c.toString();
    partial += c.toString();
    const lines = partial.split('\n');
    partial = lines.pop()!;
    for (const line of lines.filter((l) => l.startsWith('{'))) {
      const e = JSON.parse(line) as Record<string, any>;
      run.events.push(e);
      onEvent?.(e, child);
    }
  });
  return new Promise((resolve) =>
    child.on('exit', (code, signal) => {
      run.code = code;
      run.signal = signal;
      resolve(run);
    }),
  );
}

/** Every URL refuses connections: the run stopped its nodes. */
export async function unreachable(urls: string[]): Promise<void> {
  for (const url of urls) await expect(fetch(`${url}/admin-api/health`)).rejects.toThrow();
}

/** The tail of a run's output, for an assertion's message when a run fails. */
export const tail = (run: WorkflowRun) => run.stdout.slice(-3000) + run.stderr.slice(-3000);
