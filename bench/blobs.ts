/**
 * Benchmark (issue #5, blobs): upload throughput of `PUT /admin-api/blobs` against a raw file write
 * of the same bytes in the same run (goal: ratio >= 0.5), and the node's peak RSS during the
 * upload (memory must stay flat: the upload is streamed, never buffered). Size: BENCH_BLOB_MB
 * (default 1024 = the 1 GiB).
 *
 * Two baselines are printed: a plain write (page cache only) and a durable write (the same write
 * plus one fsync). The node acknowledges an upload only once every chunk is fsynced ("nothing
 * acknowledged is ever lost"), so the goal is judged against the durable baseline; the plain ratio
 * is printed too, for honesty about what durability costs on this disk.
 */
import { createWriteStream } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { randomBytes } from 'node:crypto';
import { createClient, MemoryTokenStore } from '../src/client/index.ts';
import { makeHome, spawnNode } from '../test/helpers/node.ts';
import { ensureBuilt, loadNote, rows } from './harness.ts';

const MiB = 1024 * 1024;

/** `mib` MiB of distinct 1 MiB chunks (a counter stamped into a random block: no chunk repeats, no chunk dedupe). */
function content(mib: number): Readable {
  const block = randomBytes(MiB);
  let i = 0;
  return new Readable({
    read() {
      if (i === mib) return this.push(null);
      const chunk = Buffer.from(block);
      chunk.writeUInt32LE(i++, 0);
      this.push(chunk);
    },
  });
}

/** Linux: the process's peak resident set (VmHWM) in MiB; undefined elsewhere. */
async function peakRssMiB(pid: number): Promise<number | undefined> {
  try {
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const kb = /VmHWM:\s+(\d+) kB/.exec(status)?.[1];
    return kb ? Number(kb) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

function upload(url: string, token: string, body: Readable): Promise<{ status: number; text: string }> {
  const target = new URL('/admin-api/blobs', url);
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: target.hostname, port: target.port, path: target.pathname, method: 'PUT', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/octet-stream' } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on('error', reject);
    body.pipe(req);
  });
}

export async function benchBlobs(mib = Number(process.env.BENCH_BLOB_MB ?? 1024)): Promise<{ ratio: number; peakRssMiB?: number }> {
  console.log(`# blobs (${loadNote()})`);
  await ensureBuilt();
  const paths = await makeHome();
  const scratch = await mkdtemp(join(tmpdir(), 'hearth-bench-blob-'));
  const node = await spawnNode(['run', '--home', join(paths.dir, '..'), '--node', 'test', '--log-level', 'warn'], {
    MERO_AUTH_ADMIN_USER: 'dev',
    MERO_AUTH_ADMIN_PASSWORD: 'dev-password',
  });
  try {
    const client = createClient({ baseUrl: node.url, tokenStore: new MemoryTokenStore() });
    const { accessToken } = await client.auth.login({ username: 'dev', password: 'dev-password' });

    let t = performance.now();
    await pipeline(content(mib), createWriteStream(join(scratch, 'raw')));
    const rawSecs = (performance.now() - t) / 1000;
    t = performance.now();
    await pipeline(content(mib), createWriteStream(join(scratch, 'durable'), { flush: true }));
    const durableSecs = (performance.now() - t) / 1000;

    const rssBefore = await peakRssMiB(node.child.pid!);
    t = performance.now();
    const answer = await upload(node.url, accessToken, content(mib));
    const upSecs = (performance.now() - t) / 1000;
    if (answer.status !== 200) throw new Error(`upload answered ${answer.status}: ${answer.text}`);
    const rssAfter = await peakRssMiB(node.child.pid!);

    const raw = mib / rawSecs;
    const durable = mib / durableSecs;
    const up = mib / upSecs;
    const ratio = up / durable;
    console.log(`raw file write, page cache (${mib} MiB)  ${raw.toFixed(0).padStart(8)} MB/s`);
    console.log(`raw file write + fsync (${mib} MiB)      ${durable.toFixed(0).padStart(8)} MB/s`);
    console.log(`PUT /admin-api/blobs, fsynced (${mib} MiB) ${up.toFixed(0).padStart(6)} MB/s`);
    console.log(`ratio upload / durable raw write: ${ratio.toFixed(2)} (goal >= 0.50) ${ratio >= 0.5 ? 'met' : 'NOT met'}`);
    console.log(`ratio upload / page-cache raw write: ${(up / raw).toFixed(2)} (reported; the node fsyncs before answering)`);
    rows.push({ measure: `blob upload, ${mib} MiB, fsynced`, hearth: `${up.toFixed(0)} MB/s`, baseline: `write + fsync ${durable.toFixed(0)} MB/s`, ratio, goal: '>= 0.50', met: ratio >= 0.5 });
    if (rssAfter !== undefined) {
      console.log(`node peak RSS: ${rssBefore?.toFixed(0)} MiB before, ${rssAfter.toFixed(0)} MiB after a ${mib} MiB upload`);
    }
    return { ratio, peakRssMiB: rssAfter };
  } finally {
    node.child.kill('SIGTERM');
    await node.exited;
    await rm(scratch, { recursive: true, force: true });
    await rm(paths.dir, { recursive: true, force: true });
  }
}
