#!/bin/sh
':' //; exec env MALLOC_ARENA_MAX="${MALLOC_ARENA_MAX:-2}" node "$0" "$@"
// The `hearth` executable: runs the compiled distribution (`npm run build`; `npm start` builds it
// when the sources changed). `npm link` puts it on PATH; or alias hearth="node /path/to/hearth/bin/hearth.js".
// From the TypeScript sources without a build: `npm run hearth -- <command>`.
//
// Line 2 is read twice. Run as a program (`hearth` on PATH, `./bin/hearth.js`), /bin/sh runs it:
// `:` does nothing, then `exec` replaces the shell with node on this same file, in the same process
// (same pid, arguments, exit code and signals), with MALLOC_ARENA_MAX=2 unless the environment
// already sets it. Node then reads that line as a string and a comment. Why the variable: glibc's
// malloc gives threads their own arenas (up to 8 per core) and keeps what was freed in them mapped;
// with the runtime's workers and libuv's threads a node held 55–64 MB of malloc heaps after a load,
// ~30 MB with two arenas (issue #22; docs/performance.md "Memory goals (issue #22, 2026-11-27, second
// pass)"). It must be in the environment before the process starts, hence the shell line.
// `node bin/hearth.js` skips it: set MALLOC_ARENA_MAX=2 yourself there (or in a service's environment).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const entry = new URL('../dist/app/main.js', import.meta.url);
if (!existsSync(entry)) {
  const root = fileURLToPath(new URL('..', import.meta.url));
  process.stderr.write(`hearth: not built yet: run \`npm run build\` in ${root}\n`);
  process.exit(1);
}
await import(entry.href);
