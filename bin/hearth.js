#!/usr/bin/env node
// The `hearth` executable: runs the compiled distribution (`npm run build`; `npm start` builds it
// when the sources changed). `npm link` puts it on PATH; or alias hearth="node /path/to/hearth/bin/hearth.js".
// From the TypeScript sources without a build: `npm run hearth -- <command>`.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const entry = new URL('../dist/app/main.js', import.meta.url);
if (!existsSync(entry)) {
  const root = fileURLToPath(new URL('..', import.meta.url));
  process.stderr.write(`hearth: not built yet: run \`npm run build\` in ${root}\n`);
  process.exit(1);
}
await import(entry.href);
