/**
 * Application steps (merobox `steps/install.py`, `get_application.py`, group_management's
 * uninstall): install from a local `path` or a `url`, uninstall, read and list versions.
 *
 * A node refuses a raw `.wasm` (spec: only signed bundles install). With `dev: true` the runner
 * bundles a raw `.wasm` into an `.mpk` first — with `hearth app bundle`'s code and one development
 * signing key per run, so the same file installed on several nodes is the same application there —
 * and says so once. An `.mpk` is installed as it is.
 */
import { readFile } from 'node:fs/promises';
import { basename, extname } from 'node:path';
import { buildBundle } from '../../../applications/bundle.ts';
import { isWasmModule } from '../../../applications/wasm.ts';
import { clientOf, str, StepFailure, type Handler } from '../context.ts';
import { localPath } from '../parse.ts';

/** The package a dev-bundled `.wasm` gets: stable per file name, so every node agrees on the id. */
export function devPackageOf(file: string): string {
  const stem = basename(file, extname(file)).toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '') || 'app';
  return `dev.workflow.${stem}`;
}

async function bytesOf(step: Record<string, unknown>, ctx: Parameters<Handler>[1]): Promise<{ bytes: Uint8Array; label: string }> {
  if (typeof step.path === 'string' && step.path) {
    const file = await localPath(ctx.wf, step.path);
    return { bytes: await readFile(file), label: file };
  }
  const url = str(step.url);
  const res = await fetch(url, { signal: AbortSignal.any([ctx.signal, AbortSignal.timeout(120_000)]) });
  if (!res.ok) throw new StepFailure(`downloading ${url} answered ${res.status}`);
  return { bytes: new Uint8Array(await res.arrayBuffer()), label: new URL(url).pathname };
}

const install: Handler = async (step, ctx) => {
  const client = clientOf(ctx, step);
  const { bytes, label } = await bytesOf(step, ctx);
  let bundle = bytes;
  if (isWasmModule(bytes)) {
    if (step.dev !== true) throw new StepFailure(`${label} is a raw .wasm: a node installs signed .mpk bundles only; set dev: true to have the runner bundle it, or install an .mpk`);
    ctx.noteOnce('dev-bundle', 'dev: true with a raw .wasm: the runner bundles it into an .mpk signed with a development key made for this run (the node itself installs signed bundles only)');
    const built = await buildBundle({ package: devPackageOf(label), version: '0.0.0', key: ctx.devKey(), wasm: bytes });
    bundle = built.bytes;
  }
  return client.applications.installBundle(bundle, { signal: ctx.signal });
};

export const APP_STEPS: Record<string, Handler> = {
  install_application: install,
  uninstall_application: (s, ctx) => clientOf(ctx, s).applications.uninstall(str(s.application_id)),
  get_application: async (s, ctx) => ({ application: await clientOf(ctx, s).applications.get(str(s.application_id)) }),
  list_application_versions: async (s, ctx) => ({ versions: await clientOf(ctx, s).applications.versions(str(s.application_id)) }),
};
