/**
 * Steps that need no node or only its blob store (merobox `steps/wait.py`, `script.py`,
 * `assertion.py`, `json_assertion.py`, `blob.py`, `download_blob.py`, `delete_blob.py`).
 *
 * `script` runs a local command — merobox copies it into each container (`target: nodes`) or an
 * image; hearth's nodes are local processes, so it runs once here, with the workflow's folder as
 * its working directory and `HEARTH_WORKFLOW_NODES` (JSON, node name → URL) in its environment.
 * A non-zero exit fails the step; its response is `{exit_code, stdout, stderr}`.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { open, readFile, writeFile } from 'node:fs/promises';
import { HttpError } from '../../../client/index.ts';
import { evalAssert, evalJsonAssert, statementOf, type StatementResult } from '../assertions.ts';
import { clientOf, sleep, str, StepFailure, type Handler, type StepContext } from '../context.ts';
import { localPath } from '../parse.ts';

const SCRIPT_DEADLINE_MS = 10 * 60_000;

async function startsWithShebang(file: string): Promise<boolean> {
  const fh = await open(file, 'r');
  try {
    const { bytesRead, buffer } = await fh.read(Buffer.alloc(2), 0, 2, 0);
    return bytesRead === 2 && buffer.toString() === '#!';
  } finally {
    await fh.close();
  }
}

const script: Handler = async (s, ctx) => {
  const file = await localPath(ctx.wf, str(s.script));
  const args = ((s.args as unknown[]) ?? []).map(str);
  const [cmd, argv] = (await startsWithShebang(file)) ? [file, args] : ['sh', [file, ...args]];
  const nodes = Object.fromEntries([...ctx.nodes.values()].map((n) => [n.name, n.url]));
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, argv, { cwd: ctx.wf.dir, env: { ...process.env, HEARTH_WORKFLOW_NODES: JSON.stringify(nodes) }, stdio: ['ignore', 'pipe', 'pipe'], signal: AbortSignal.any([ctx.signal, AbortSignal.timeout(SCRIPT_DEADLINE_MS)]) });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.once('error', (err) => reject(new StepFailure(`cannot run ${file}: ${(err as NodeJS.ErrnoException).code === 'EACCES' ? 'not executable (chmod +x it)' : err.message}`)));
    child.once('close', (code, signal) => {
      const out = { exit_code: code, stdout: stdout.trimEnd(), stderr: stderr.trimEnd() };
      if (code === 0) resolve(out);
      else reject(new StepFailure(`${file} exited with ${code ?? signal}${stderr.trim() ? `: ${stderr.trim().split('\n').pop()}` : ''}`, out));
    });
  });
};

/** Runs statements; fails naming each one that does not hold. */
function statements(evaluate: typeof evalAssert): Handler {
  return async (s, ctx) => {
    const results: StatementResult[] = ((s.statements as unknown[]) ?? []).map((entry) => {
      const { statement, message } = statementOf(entry);
      return { statement, message, ...evaluate(statement, ctx.values) };
    });
    for (const r of results) ctx.progress(`${r.passed ? '[OK]' : '[FAIL]'} ${r.message ?? r.statement} ${r.passed ? '' : r.detail}`.trimEnd());
    const failed = results.filter((r) => !r.passed);
    if (failed.length && s.non_blocking !== true) {
      throw new StepFailure(failed.map((r) => `${r.message ?? r.statement} failed ${r.detail}`).join('; '), { statements: results });
    }
    return { passed: results.length - failed.length, failed: failed.length, statements: results };
  };
}

const wait: Handler = async (s, ctx: StepContext) => {
  if (typeof s.message === 'string') ctx.progress(s.message);
  await sleep(Number(s.seconds) * 1000, ctx.signal);
  return { seconds: s.seconds };
};

const uploadBlob: Handler = async (s, ctx) => {
  const bytes = await readFile(await localPath(ctx.wf, str(s.file_path)));
  return clientOf(ctx, s).blobs.upload(bytes, { ...(s.context_id ? { contextId: str(s.context_id) } : {}), signal: ctx.signal });
};

const downloadBlob: Handler = async (s, ctx) => {
  const bytes = await clientOf(ctx, s).blobs.bytes(str(s.blob_id), { ...(s.context_id ? { contextId: str(s.context_id) } : {}), signal: ctx.signal });
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  if (s.expected_size !== undefined && Number(s.expected_size) !== bytes.length) throw new StepFailure(`expected ${Number(s.expected_size)} bytes, got ${bytes.length}`);
  if (s.expected_sha256 !== undefined && str(s.expected_sha256).toLowerCase() !== sha256) throw new StepFailure(`expected sha256 ${str(s.expected_sha256)}, got ${sha256}`);
  if (s.output_path) await writeFile(await localPath(ctx.wf, str(s.output_path)), bytes);
  return { blob_id: s.blob_id, size: bytes.length, sha256 };
};

const deleteBlob: Handler = async (s, ctx) => {
  try {
    const r = await clientOf(ctx, s).blobs.delete(str(s.blob_id));
    // hearth answers an absent blob with deleted: false; merobox's missing_ok: false makes that a failure
    if (!r.deleted && s.missing_ok === false) throw new StepFailure(`blob ${str(s.blob_id)} was not on ${str(s.node)} (missing_ok: false)`, r);
    return r;
  } catch (err) {
    if (err instanceof HttpError && err.status === 404 && s.missing_ok !== false) return { blob_id: s.blob_id, deleted: false };
    throw err;
  }
};

export const LOCAL_STEPS: Record<string, Handler> = {
  wait,
  script,
  assert: statements(evalAssert),
  json_assert: statements(evalJsonAssert),
  upload_blob: uploadBlob,
  download_blob: downloadBlob,
  delete_blob: deleteBlob,
};
