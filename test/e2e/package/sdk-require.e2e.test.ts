/**
 * `require('hearth/client')` (issue #25 §5): from CommonJS the SDK loads where Node.js can require
 * an ES module (>= 20.19), and where it cannot the error names the fix instead of Node's opaque
 * "No exports main defined".
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ROOT } from '../../helpers/node.ts';

const run = promisify(execFile);
let project: string;

beforeAll(async () => {
  project = await mkdtemp(join(tmpdir(), 'hearth-sdk-cjs-'));
  await mkdir(join(project, 'node_modules'));
  await symlink(ROOT, join(project, 'node_modules', 'hearth'), 'dir');
  await writeFile(join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true }));
  await writeFile(join(project, 'main.cjs'), "const { createClient, HttpError } = require('hearth/client');\nconsole.log(typeof createClient, typeof HttpError);\n");
});
afterAll(() => rm(project, { recursive: true, force: true }));

const [major, minor] = process.versions.node.split('.').map(Number) as [number, number];
const canRequireEsm = major > 22 || (major === 22 && minor >= 12) || (major === 20 && minor >= 19);

it.runIf(canRequireEsm)('require() loads the SDK from CommonJS', async () => {
  const { stdout } = await run(process.execPath, ['main.cjs'], { cwd: project, env: { PATH: process.env.PATH } });
  expect(stdout).toBe('function function\n');
});

it('without require(esm), the error says the SDK is ESM only and how to load it', async () => {
  const failed = await run(process.execPath, ['--no-experimental-require-module', 'main.cjs'], { cwd: project, env: { PATH: process.env.PATH } }).then(
    () => undefined,
    (e: { stderr: string }) => e,
  );
  expect(failed?.stderr).toContain("hearth/client is ESM only and this Node.js cannot require() an ES module: use import { createClient } from 'hearth/client'");
});
