/**
 * Conformance: the blob routes (admin spec "Blobs") through the SDK: raw upload, list, HEAD info,
 * download (octet-stream and a sniffed type) and delete, with every answer checked against the
 * node's OpenAPI document.
 */
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Conformance } from '../helpers/conformance.ts';
import { startTestNode, type TestNode } from '../helpers/node.ts';
import { httpError } from '../helpers/status.ts';

let node: TestNode;
let conformance: Conformance;

const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');
const PNG_MAGIC = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

beforeAll(async () => {
  node = await startTestNode();
  conformance = await Conformance.load(node.url);
});
afterAll(() => node.destroy());

it('answers every blob route as documented', async () => {
  const admin = conformance.client();
  await admin.auth.login({ username: node.adminUser, password: node.adminPassword });

  const data = new Uint8Array(randomBytes(4096));
  data[0] = 0; // not a known magic number: application/octet-stream
  const up = await admin.blobs.upload(data, { hash: sha(data) });
  expect(up.size).toBe(data.length);
  expect(up.blob_id).toMatch(/^[0-9a-f]{64}$/);

  const png = new Uint8Array([...PNG_MAGIC, ...randomBytes(64)]);
  const pic = await admin.blobs.upload(png);

  const listed = await admin.blobs.list();
  expect(listed).toEqual(expect.arrayContaining([{ blob_id: up.blob_id, size: data.length }, { blob_id: pic.blob_id, size: png.length }]));

  expect(await admin.blobs.head(up.blob_id)).toEqual({
    blobId: up.blob_id,
    size: data.length,
    hash: sha(data),
    mimeType: 'application/octet-stream',
    source: 'local',
  });
  expect((await admin.blobs.head(pic.blob_id)).mimeType).toBe('image/png');

  expect(Buffer.from(await admin.blobs.bytes(up.blob_id)).equals(Buffer.from(data))).toBe(true);
  expect(Buffer.from(await admin.blobs.bytes(pic.blob_id)).equals(Buffer.from(png))).toBe(true);

  // Documented refusals: a hash mismatch, an invalid id, a blob held nowhere.
  expect((await httpError(admin.blobs.upload(new Uint8Array([1, 2, 3]), { hash: 'ab'.repeat(32) }))).status).toBe(400);
  expect((await httpError(admin.blobs.bytes('not-a-blob-id'))).status).toBe(400);
  expect((await httpError(admin.blobs.head('cd'.repeat(32)))).status).toBe(404);
  expect((await httpError(conformance.client().blobs.list())).status).toBe(401);

  expect(await admin.blobs.delete(up.blob_id)).toEqual({ blob_id: up.blob_id, deleted: true });
  expect(await admin.blobs.delete(pic.blob_id)).toEqual({ blob_id: pic.blob_id, deleted: true });
  expect(await admin.blobs.list()).not.toContainEqual(expect.objectContaining({ blob_id: up.blob_id }));

  conformance.assertAreaCovered('blobs');
});
