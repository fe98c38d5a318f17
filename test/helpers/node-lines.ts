/**
 * Node.js binaries of other lines for end-to-end tests that need them (issue #32: QUIC runs on
 * Node.js 22+, the test run on the machine's Node.js 20). They come from the registry's `node`
 * package, fetched before the test run as CI does: `npm install --prefix <dir>/<major> node@<major>`
 * with `<dir>` = `$HEARTH_NODE_LINES_DIR`, else `<repo>/.cache/node-lines`. `$HEARTH_NODE<major>`
 * (e.g. HEARTH_NODE26) names a binary directly. A test without one skips and says how to get it.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './node.ts';

/** Where a line's `npm install --prefix` puts the binary, most likely first. */
function candidates(major: number): string[] {
  const dir = join(process.env.HEARTH_NODE_LINES_DIR || join(ROOT, '.cache', 'node-lines'), String(major));
  return [join(dir, 'node_modules', 'node', 'bin', 'node'), join(dir, 'node_modules', '.bin', 'node'), join(dir, 'bin', 'node')];
}

export type NodeLine = { binary: string; version: string } | { binary?: undefined; why: string };

/** A Node.js binary of line `major` (checked by running `--version`), or why there is none. */
export function nodeLine(major: number): NodeLine {
  const named = process.env[`HEARTH_NODE${major}`];
  for (const binary of named ? [named] : candidates(major)) {
    if (!existsSync(binary)) continue;
    const run = spawnSync(binary, ['--version'], { encoding: 'utf8', timeout: 30_000 });
    const version = run.stdout?.trim().replace(/^v/, '') ?? '';
    if (run.status === 0 && version.split('.')[0] === String(major)) return { binary, version };
    if (named) return { why: `HEARTH_NODE${major}=${named} is not a Node.js ${major} binary (${run.error?.message ?? (version || 'no version')})` };
  }
  return { why: `no Node.js ${major} binary: run \`npm install --prefix .cache/node-lines/${major} node@${major}\` (or set HEARTH_NODE${major})` };
}
