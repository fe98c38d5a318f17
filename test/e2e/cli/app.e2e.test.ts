/**
 * `hearth app` node commands end to end (issue #6 CLI; admin spec "Applications and packages"):
 * install from the node's registry and from its filesystem, list, get (by id or alias), packages,
 * versions and uninstall — the CLI as a child process, in human and JSON output.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publishToDirectory } from '../../../src/applications/registry.ts';
import type { Client } from '../../../src/client/index.ts';
import { makeBundle, signingKey, tinyWasm, type MadeBundle } from '../../helpers/bundles.ts';
import { startCliNode, type CliNode, type CliUser } from '../../helpers/cli.ts';
import { ROOT, type TestNode } from '../../helpers/node.ts';

let cli: CliNode;
let node: TestNode;
let user: CliUser;
let sdk: Client;
let work: string;
let dev: MadeBundle;
let v1: MadeBundle;
let v2: MadeBundle;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'hearth-cli-app-'));
  const registry = join(work, 'registry');
  const key = signingKey();
  dev = await makeBundle({ wasm: tinyWasm(), package: 'com.hearth.clidev', version: '0.1.0', key, dir: work, name: 'Dev App' });
  v1 = await makeBundle({ wasm: tinyWasm(), package: 'com.hearth.clireg', version: '1.0.0', key, dir: work });
  v2 = await makeBundle({ wasm: tinyWasm({ extra: 1 }), package: 'com.hearth.clireg', version: '2.0.0', key, dir: work });
  await publishToDirectory(registry, v1.bytes);
  await publishToDirectory(registry, v2.bytes);
  cli = await startCliNode({ configure: (cfg) => void (cfg.registry.dir = registry) });
  ({ node, sdk, user } = cli);
}, 60_000);

afterAll(async () => {
  await cli?.destroy();
  await rm(work, { recursive: true, force: true });
});

describe('hearth app (node)', { timeout: 120_000 }, () => {
  it('install-dev installs a bundle from the node\'s filesystem (a relative path made absolute), with progress', async () => {
    const res = await user.run(['app', 'install-dev', relative(ROOT, dev.path)], { env: { HEARTH_PROGRESS: 'lines' } });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toBe(`installed ${dev.path}\napplication id: ${dev.applicationId}\n`);
    expect(res.stderr).toContain(`installing ${dev.path}: verifying the bundle on the node\n`);
    expect(res.stderr).toContain(`installing ${dev.path}: installed\n`);
    expect((await sdk.applications.get(dev.applicationId)).source).toBe(`file://${dev.path}`);

    const missing = await user.run(['app', 'install-dev', join(work, 'nope.mpk'), '--output', 'json']);
    expect(missing.code).toBe(1);
    expect(JSON.parse(missing.stderr)).toMatchObject({ exitCode: 1, status: 404 });
  });

  it('install resolves package@version (or package version) from the node\'s registry', async () => {
    expect(await user.json(['app', 'install', 'com.hearth.clireg@1.0.0'])).toEqual({
      applicationId: v1.applicationId,
      package: 'com.hearth.clireg',
      version: '1.0.0',
    });
    const res = await user.run(['app', 'install', 'com.hearth.clireg', '2.0.0'], { env: { HEARTH_PROGRESS: 'lines' } });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toBe(`installed com.hearth.clireg@2.0.0\napplication id: ${v2.applicationId}\n`);
    expect(res.stderr).toContain("installing com.hearth.clireg@2.0.0: resolving and verifying the bundle on the node's registry\n");
  });

  it('install usage errors exit 2 before any request; an unknown version is the node\'s error (exit 1)', async () => {
    const noVersion = await user.run(['app', 'install', 'com.hearth.clireg']);
    expect(noVersion.code).toBe(2);
    expect(noVersion.stderr).toContain('hearth app versions com.hearth.clireg');
    const url = await user.run(['app', 'install', 'https://example.com/app.mpk']);
    expect(url.code).toBe(2);
    expect(url.stderr).toContain('hearth app install-dev <path>');
    const unknown = await user.run(['app', 'install', 'com.hearth.clireg@9.9.9']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/^hearth: .*9\.9\.9.*\(HTTP \d{3}\)/m);
  });

  it('lists applications, packages and versions in both formats', async () => {
    const apps = await user.json(['app', 'list']);
    // one application per package and signer: installing 2.0.0 replaced 1.0.0 under the same id
    expect(v2.applicationId).toBe(v1.applicationId);
    expect(apps.map((a: { id: string }) => a.id).sort()).toEqual([dev.applicationId, v1.applicationId].sort());
    expect(apps.find((a: { id: string }) => a.id === v1.applicationId).version).toBe('2.0.0');
    const table = await user.human(['app', 'ls']);
    expect(table).toMatch(/^APPLICATION ID\s+ALIAS\s+PACKAGE\s+VERSION\s+SIZE\s+SOURCE\n/);
    // ids shortened to fit 100 columns; --wide shows them whole
    expect(table).toMatch(new RegExp(`${dev.applicationId.slice(0, 12)}\\S*…\\s+-\\s+com\\.hearth\\.clidev\\s+0\\.1\\.0\\s+\\d`));
    expect(Math.max(...table.trimEnd().split('\n').map((l) => l.length))).toBeLessThanOrEqual(100);
    expect(await user.human(['app', 'ls', '--wide'])).toMatch(new RegExp(`${dev.applicationId}\\s+-\\s+com\\.hearth\\.clidev\\s+0\\.1\\.0\\s+\\d`));

    expect((await user.json(['app', 'packages'])).sort()).toEqual(['com.hearth.clidev', 'com.hearth.clireg']);
    expect((await user.human(['app', 'packages'])).split('\n').sort()).toEqual(['', 'com.hearth.clidev', 'com.hearth.clireg']);
    expect(await user.json(['app', 'versions', 'com.hearth.clireg'])).toEqual(['2.0.0', '1.0.0']);
    expect(await user.human(['app', 'versions', 'com.hearth.clireg'])).toBe('2.0.0\n1.0.0\n');
  });

  it('get takes an id or an application alias; an unknown alias or a bad id is a usage error', async () => {
    const json = await user.json(['app', 'get', dev.applicationId]);
    const fromSdk = JSON.parse(JSON.stringify(await sdk.applications.get(dev.applicationId)));
    // the metadata bytes are shown as the JSON text they are; --raw prints the node's byte array
    expect(json).toEqual({ ...fromSdk, metadata: '{"package":"com.hearth.clidev","version":"0.1.0","name":"Dev App"}' });
    expect(await user.json(['app', 'get', dev.applicationId, '--raw'])).toEqual(fromSdk);
    await sdk.aliases.create('application', 'devapp', dev.applicationId);
    const human = await user.human(['app', 'get', 'devapp']);
    expect(human).toContain(`application id: ${dev.applicationId}\npackage:        com.hearth.clidev\nversion:        0.1.0\n`);
    expect(human).toContain('metadata:       {"package":"com.hearth.clidev","version":"0.1.0","name":"Dev App"}');

    const ghost = await user.run(['app', 'get', 'ghost']);
    expect(ghost.code).toBe(2);
    expect(ghost.stderr).toContain('no application alias "ghost" on this node (see: hearth alias list application)');
    const bad = await user.run(['app', 'get', 'not an id']);
    expect(bad.code).toBe(2);
    const absent = await user.run(['app', 'get', 'e'.repeat(64)]);
    expect(absent.code).toBe(1);
    expect(absent.stderr).toContain('(HTTP 404)');
  });

  it('uninstall asks first (exit 2, still installed), then uninstalls by id or alias', async () => {
    const asked = await user.run(['app', 'uninstall', v1.applicationId]);
    expect(asked.code).toBe(2);
    expect(asked.stderr).toContain('pass --yes');
    expect((await sdk.applications.get(v1.applicationId)).id).toBe(v1.applicationId);

    expect(await user.json(['app', 'uninstall', v1.applicationId, '--yes'])).toEqual({ applicationId: v1.applicationId });
    expect(await user.human(['app', 'uninstall', 'devapp', '-y'])).toBe(`uninstalled application ${dev.applicationId}\n`);
    const left = (await sdk.applications.list()).map((a) => a.id);
    expect(left).toEqual([]);
    expect(await user.human(['app', 'list'])).toContain('no applications installed');
  });
});
