/**
 * `hearth blob upload | download | list | info | delete` (issue #6; reference tree product.md B4;
 * admin spec "Blobs", admin-wire-a §5): the node's content-addressed blobs.
 *
 * Uploads stream the file (no whole-file buffer) with a progress bar on stderr; downloads stream
 * into a temporary file beside the target and link it into place at the end, so an interrupted
 * download never leaves a truncated file under the requested name, and an existing file is never
 * replaced without `--force`. `--out -` (the default) writes the content to stdout.
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { link, rename, stat, unlink } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { InvalidArgumentError, type Command } from 'commander';
import { connectOptions, withCli, type Cli, type ConnectOpts } from './connect.ts';
import { UsageError } from './exit.ts';
import { resolveRef, type IdRef } from './id-args.ts';
import { refArg } from './refs.ts';
import { renderRecord } from './output.ts';
import { bytes } from './progress.ts';
import { errnoText } from '../errno-text.ts';

interface ContextFlag extends ConnectOpts {
  context?: IdRef;
}

function hashArg(value: string): string {
  if (!/^[0-9a-fA-F]{64}$/.test(value)) throw new InvalidArgumentError('expected the SHA-256 of the content, 64 hex characters');
  return value.toLowerCase();
}

async function contextId(cli: Cli, ref?: IdRef): Promise<string | undefined> {
  return ref ? resolveRef(cli, 'context', ref) : undefined;
}

export function registerBlobCommands(program: Command): void {
  const blob = program.command('blob').description("the node's content-addressed blobs");

  connectOptions(
    blob
      .command('upload')
      .description('upload a file as a blob (streamed, with progress) and print its id')
      .argument('<file>', 'the file to upload')
      .option('--context <id|alias>', "announce the blob to this context's peers", refArg('context', undefined, '--context'))
      .option('--hash <sha256>', 'expected SHA-256 of the content; the node refuses a mismatch', hashArg),
  ).action(
    withCli<ContextFlag & { hash?: string }>(async (cli, [file], flags) => {
      const info = await stat(file).catch((err: NodeJS.ErrnoException) => {
        throw new UsageError(`cannot read ${file}: ${errnoText(err)}`);
      });
      if (!info.isFile()) throw new UsageError(`${file} is not a regular file`);
      const ctx = await contextId(cli, flags.context);
      const progress = cli.progress(`uploading ${basename(file)}`);
      progress.update(0, info.size);
      const body = Readable.toWeb(createReadStream(file)) as ReadableStream<Uint8Array>;
      const result = await cli.client.blobs.upload(body, {
        signal: cli.signal,
        contextId: ctx,
        hash: flags.hash,
        onProgress: (done) => progress.update(done, info.size),
      });
      progress.done();
      cli.out.result({ ...result, file: resolve(file) }, () => `uploaded ${file} (${bytes(result.size)})\nblob id: ${result.blob_id}`);
    }),
  );

  connectOptions(
    blob
      .command('download')
      .description('download a blob to a file, or to stdout with --out - (the default)')
      .argument('<id>', 'blob id (64 hex, or a unique prefix of 6+)', refArg('blob', 'blob id'))
      .option('--out <file|->', 'where to write the content; "-" is stdout', '-')
      .option('--force', 'replace an existing file')
      .option('--context <id|alias>', "search this context's peers when the node does not hold the blob", refArg('context', undefined, '--context')),
  ).action(
    withCli<ContextFlag & { out: string; force?: boolean }>(async (cli, [id], flags) => {
      const toStdout = flags.out === '-';
      if (toStdout && cli.out.json) throw new UsageError('--output json prints a result document on stdout: pass --out <file> for the content');
      const target = toStdout ? undefined : resolve(flags.out);
      if (target && !flags.force && (await exists(target))) throw new UsageError(`${flags.out} exists; pass --force to replace it`);
      const ctx = await contextId(cli, flags.context);
      const progress = cli.progress(`downloading ${id.slice(0, 12)}…`);
      const stream = await cli.client.blobs.download(id, {
        signal: cli.signal,
        contextId: ctx,
        onProgress: (done, total) => progress.update(done, total),
      });
      const source = Readable.fromWeb(stream as never);
      if (!target) {
        await pipeline(source, stdoutSink(), { signal: cli.signal });
        progress.done();
        return;
      }
      const partial = join(dirname(target), `.${basename(target)}.part-${process.pid}`);
      try {
        await pipeline(source, createWriteStream(partial, { flags: 'wx' }), { signal: cli.signal });
        if (flags.force) await rename(partial, target);
        else await link(partial, target).catch((err: NodeJS.ErrnoException) => {
          throw err.code === 'EEXIST' ? new UsageError(`${flags.out} appeared while downloading; pass --force to replace it`) : err;
        });
      } finally {
        await unlink(partial).catch(() => undefined);
      }
      progress.done();
      const size = (await stat(target)).size;
      cli.out.result({ blob_id: id, path: target, size }, () => `wrote ${flags.out} (${bytes(size)})`);
    }),
  );

  connectOptions(blob.command('list').alias('ls').description('list the blobs the node holds')).action(
    withCli(async (cli) => {
      const blobs = await cli.client.blobs.list({ signal: cli.signal });
      cli.out.table(blobs, [
        { header: 'blob id', value: (b) => b.blob_id },
        { header: 'size', value: (b) => b.size },
      ], 'no blobs (upload one with: hearth blob upload <file>)');
    }),
  );

  connectOptions(
    blob
      .command('info')
      .description("a blob's size, hash, MIME type and whether a peer holds it")
      .argument('<id>', 'blob id (64 hex, or a unique prefix of 6+)', refArg('blob', 'blob id'))
      .option('--context <id|alias>', "search this context's peers when the node does not hold the blob", refArg('context', undefined, '--context')),
  ).action(
    withCli<ContextFlag>(async (cli, [id], flags) => {
      const info = await cli.client.blobs.head(id, { signal: cli.signal, contextId: await contextId(cli, flags.context) });
      cli.out.result(info, () =>
        renderRecord({
          'blob id': info.blobId,
          size: info.size === undefined ? 'unknown' : `${info.size} bytes`,
          hash: info.hash,
          'mime type': info.mimeType,
          source: info.source === 'peer' ? 'a peer of the context' : 'this node',
        }),
      );
    }),
  );

  connectOptions(
    blob.command('delete').alias('rm').description('delete a blob from the node').argument('<id>', 'blob id (64 hex, or a unique prefix of 6+)', refArg('blob', 'blob id')),
    { destructive: true },
  ).action(
    withCli(async (cli, [id]) => {
      await cli.confirm(`delete blob ${id}?`);
      const result = await cli.client.blobs.delete(id, { signal: cli.signal });
      cli.out.result(result, () => (result.deleted ? `deleted blob ${result.blob_id}` : `blob ${result.blob_id} was not deleted`));
    }),
  );
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

/** stdout without ending it (pipeline would close the process's stdout). */
function stdoutSink(): Writable {
  return new Writable({
    write(chunk, _enc, done) {
      if (process.stdout.write(chunk)) done();
      else process.stdout.once('drain', () => done());
    },
  });
}
