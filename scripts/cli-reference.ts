/** Rewrites docs/cli-reference.md from the command tree (`npm run docs:cli`). */
import { writeFileSync } from 'node:fs';
import { buildProgram } from '../src/cli/program.ts';
import { renderReference } from '../src/cli/reference.ts';

const target = new URL('../docs/cli-reference.md', import.meta.url);
writeFileSync(target, renderReference(buildProgram()));
process.stdout.write(`wrote ${target.pathname}\n`);
