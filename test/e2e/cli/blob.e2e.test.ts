/**
 * `hearth blob …` end to end (issue #6 CLI; admin spec "Blobs"): the CLI as a child process against
 * a real node, in human and JSON output — upload and download with progress, list, info, delete
 * with confirmation, and the exit codes of a usage error and a node error.
 */
import { randomBytes, createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '../../../src/client/index.ts';
import { CliUser, startCliNode, type CliNode } from '../../helpers/cli.ts';
import { startTestNode, type TestNode } from '../../helpers/node.ts';

let cli: CliNode;
let node: TestNode;
let user: CliUser;
let sdk: Client;
let work: string;
const content = randomBytes(300_000);
const contentId = createHash('sha256').update(content).digest('hex');

beforeAll(async () => {
  cli = await startCliNode();
  ({ node, sdk, user } = cli);
  work = await mkdtemp(join(tmpdir(), 'hearth-cli-blob-'));
  await writeFile(join(work, 'data.bin'), content);
}, 60_000);

afterAll(async () => {
  await cli?.destroy();
  await rm(work, { recursive: true, force: true });
});

describe('hearth blob', { timeout: 120_000 }, () => {
  let blobId: string;

  it('uploads a file with progress on stderr and prints the id (human), or the node\'s {blob_id, size} (json)', async () => {
    const res = await user.run(['blob', 'upload', join(work, 'data.bin')], { env: { HEARTH_PROGRESS: 'lines' } });
    expect(res.code, res.stderr).toBe(0);
    const id = /blob id: ([0-9a-f]{64})/.exec(res.stdout)?.[1];
    expect(id).toBeDefined();
    blobId = id!;
    expect(res.stdout).toContain('(293.0 KiB)');
    expect(res.stderr).toMatch(/uploading data\.bin: 0% /);
    expect(res.stderr).toMatch(/uploading data\.bin: 100% 293\.0 KiB \/ 293\.0 KiB/);
    expect(res.stderr).toContain('uploading data.bin: done');

    const small = join(work, 'small.txt');
    await writeFile(small, 'hello blob');
    const json = await user.json(['blob', 'upload', small, '--hash', createHash('sha256').update('hello blob').digest('hex')]);
    expect(json).toEqual({ blob_id: expect.stringMatching(/^[0-9a-f]{64}$/), size: 10, file: small });
    // the node holds what was sent
    expect(Buffer.from(await sdk.blobs.bytes(json.blob_id)).toString()).toBe('hello blob');
    expect(Buffer.from(await sdk.blobs.bytes(blobId)).equals(content)).toBe(true);
  });

  it('a wrong --hash is refused by the node: exit 1 with its message; a malformed one at parse time: exit 2', async () => {
    const res = await user.run(['blob', 'upload', join(work, 'data.bin'), '--hash', 'ab'.repeat(32)]);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/^hearth: .*HTTP 400/m);
    const bad = await user.run(['blob', 'upload', join(work, 'data.bin'), '--hash', 'xyz']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('expected the SHA-256 of the content');
    const ghost = await user.run(['blob', 'upload', join(work, 'data.bin'), '--context', 'ghost']);
    expect(ghost.code).toBe(2);
    expect(ghost.stderr).toContain('no context alias "ghost" on this node (see: hearth alias list context)');
    const missing = await user.run(['blob', 'upload', join(work, 'nope.bin')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('cannot read');
  });

  it('lists blobs as a table or as the node\'s entries', async () => {
    const list = await user.json(['blob', 'list']);
    expect(list).toEqual(expect.arrayContaining([{ blob_id: blobId, size: content.length }]));
    const human = await user.human(['blob', 'ls']);
    expect(human).toMatch(/^BLOB ID\s+SIZE\n/);
    expect(human).toMatch(new RegExp(`${blobId}\\s+${content.length}`));
  });

  it('info shows size and hash in both formats', async () => {
    const info = await user.json(['blob', 'info', blobId]);
    expect(info).toMatchObject({ blobId, size: content.length, source: 'local' });
    const human = await user.human(['blob', 'info', blobId]);
    expect(human).toContain(`blob id:   ${blobId}\nsize:      ${content.length} bytes\nhash:      ${info.hash}\n`);
    expect(human).toContain('source:    this node');
  });

  it('downloads to a file with progress, refuses to overwrite without --force, and streams to stdout', async () => {
    const out = join(work, 'out.bin');
    const res = await user.run(['blob', 'download', blobId, '--out', out], { env: { HEARTH_PROGRESS: 'lines' } });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toBe(`wrote ${out} (293.0 KiB)\n`);
    expect(res.stderr).toMatch(/downloading [0-9a-f]{12}…: 100% /);
    expect((await readFile(out)).equals(content)).toBe(true);

    await writeFile(out, 'keep me');
    const refused = await user.run(['blob', 'download', blobId, '--out', out]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('exists; pass --force');
    expect(await readFile(out, 'utf8')).toBe('keep me');

    const forced = await user.json(['blob', 'download', blobId, '--out', out, '--force']);
    expect(forced).toEqual({ blob_id: blobId, path: out, size: content.length });
    expect((await readFile(out)).equals(content)).toBe(true);

    const small = (await sdk.blobs.list()).find((b) => b.size === 10)!;
    expect(await user.human(['blob', 'download', small.blob_id])).toBe('hello blob');
    const mixed = await user.run(['blob', 'download', small.blob_id, '--output', 'json']);
    expect(mixed.code).toBe(2);
    expect(mixed.stderr).toContain('pass --out <file>');
  });

  it('a bad id fails at parse time (exit 2); an unknown blob is the node\'s 404 (exit 1)', async () => {
    const bad = await user.run(['blob', 'info', 'not-an-id']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("invalid for argument 'id'");
    const res = await user.run(['blob', 'download', contentId.replace(/^./, (c) => (c === '0' ? '1' : '0')), '--out', join(work, 'x')]);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/^hearth: Blob [0-9a-f]{64} not found.*\(HTTP 404\)/m);
    const json = await user.run(['blob', 'info', 'f'.repeat(64), '--output', 'json']);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stderr)).toMatchObject({ exitCode: 1, status: 404 });
  });

  it('refreshes an expired session before a streamed upload (a stream cannot be sent twice)', async () => {
    const short = await startTestNode({
      configure: (cfg) => {
        cfg.auth.accessTokenTtlSecs = 1;
        cfg.auth.leewaySecs = 0;
      },
    });
    const u = await CliUser.create(short.url);
    try {
      await u.login(short.adminUser, short.adminPassword);
      const before = JSON.parse(await readFile(join(u.root, 'profiles', 'default.json'), 'utf8')).tokens.accessToken;
      await new Promise((r) => setTimeout(r, 2_100));
      const res = await u.json(['blob', 'upload', join(work, 'data.bin')]);
      expect(res).toMatchObject({ blob_id: expect.stringMatching(/^[0-9a-f]{64}$/), size: content.length });
      const after = JSON.parse(await readFile(join(u.root, 'profiles', 'default.json'), 'utf8')).tokens.accessToken;
      expect(after).not.toBe(before);
    } finally {
      await u.destroy();
      await short.destroy();
    }
  });

  it('delete asks first: without --yes and a terminal it exits 2 and deletes nothing', async () => {
    const res = await user.run(['blob', 'delete', blobId]);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('pass --yes');
    expect((await sdk.blobs.head(blobId)).size).toBe(content.length);

    expect(await user.json(['blob', 'delete', blobId, '--yes'])).toEqual({ blob_id: blobId, deleted: true });
    await expect(sdk.blobs.head(blobId)).rejects.toMatchObject({ status: 404 });

    const small = (await sdk.blobs.list()).find((b) => b.size === 10)!;
    expect(await user.human(['blob', 'rm', small.blob_id, '-y'])).toBe(`deleted blob ${small.blob_id}\n`);
    expect(await user.human(['blob', 'list'])).toContain('no blobs');
  });
});
