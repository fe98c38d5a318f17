#!/bin/sh
':' //; exec env MALLOC_ARENA_MAX="${MALLOC_ARENA_MAX:-2}" MALLOC_TRIM_THRESHOLD_="${MALLOC_TRIM_THRESHOLD_:-131072}" node "$0" "$@"
// The `hearth` executable: runs the compiled distribution (`npm run build`; `npm start` builds it
// when the sources changed; the package's tarball ships it, `prepack` builds it). `npm install
// --global hearth-node` (or `npm link` in a clone) puts it on PATH, as a symlink to this file.
// From the TypeScript sources without a build: `npm run hearth -- <command>`.
//
// This file is written for old Node.js too (no top-level await, nothing newer than ES2017 before the
// version check), so an unsupported Node.js gets one line naming the supported lines instead of a
// syntax error from deep inside the distribution (issue #32).
//
// Line 2 is read twice. Run as a program (`hearth` on PATH, `./bin/hearth.js`), /bin/sh runs it:
// `:` does nothing, then `exec` replaces the shell with node on this same file, in the same process
// (same pid, arguments, exit code and signals), with MALLOC_ARENA_MAX=2 and MALLOC_TRIM_THRESHOLD_=131072
// unless the environment already sets them. Node then reads that line as a string and a comment.
// Why: glibc's malloc gives threads their own arenas (up to 8 per core) and keeps what was freed in
// them mapped, and raises its trim threshold as the program frees large blocks; with the runtime's
// workers and libuv's threads a node held 55–64 MB of malloc heaps after a load and 24 MB idle; with
// two arenas and a fixed 128 KiB threshold 29 MB and 8 MB (issue #22; docs/performance.md "Memory
// goals (issue #22, 2026-11-27, second pass)"). They must be in the environment before the process
// starts, hence the shell line. `node bin/hearth.js` skips it: set them yourself there (or in a
// service's environment).
// bare 'fs' and 'url', not 'node:…': Node.js before 14.13 loads no `node:` specifier in an ES module
import { existsSync } from 'fs';
import { fileURLToPath } from 'url';

const SUPPORTED = 'Node.js 20.19+, 22, 24 or 26';
const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 20 || (major === 20 && minor < 19)) {
  process.stderr.write(`hearth: Node.js ${process.versions.node} is not supported: hearth runs on ${SUPPORTED}\n`);
  process.exit(1);
}

const entry = new URL('../dist/app/main.js', import.meta.url);
if (!existsSync(entry)) {
  const root = fileURLToPath(new URL('..', import.meta.url));
  // a clone has its sources and builds; an installed package ships dist/ and has no src/
  const clone = existsSync(new URL('../src/main.ts', import.meta.url));
  process.stderr.write(clone ? `hearth: not built yet: run \`npm run build\` in ${root}\n` : `hearth: this installation has no dist/ (${root}): install the package again\n`);
  process.exit(1);
}
import(entry.href).catch((err) => {
  // what the entry did not catch itself (it reports its own errors): one line, the trace with --verbose
  process.stderr.write(`hearth: ${process.argv.includes('--verbose') && err && err.stack ? err.stack : String(err && err.message ? err.message : err)}\n`);
  process.exit(1);
});
