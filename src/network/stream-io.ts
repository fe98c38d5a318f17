/**
 * Reading and writing frames on a libp2p 3 stream: a `ByteReader` fed by the stream's events (its
 * pause/resume withhold yamux window updates, so a fast sender is held back), a write that waits
 * for drain, and the two ways an exchange ends (a graceful close, a reset).
 */
import './polyfill.ts';
import type { Stream } from '@libp2p/interface';
import { ByteReader } from './frames.ts';

/** yamux streams per connection (domain.md §1.1: 256, as the reference). */
export const MAX_STREAMS_PER_CONNECTION = 256;

/**
 * The most a peer may send on one stream ahead of our reading (yamux's window; its default is
 * 16 MiB): a paused stream holds at most this much, however fast the peer writes.
 */
export const STREAM_WINDOW_BYTES = 4 * 1024 * 1024;

/** libp2p resets a stream whose unread buffer passes this: a peer that ignores the window. */
const READ_BUFFER_BYTES = STREAM_WINDOW_BYTES + 1024 * 1024;

export function readerOf(stream: Stream, highWater: number): ByteReader {
  stream.maxReadBufferLength = Math.max(stream.maxReadBufferLength, READ_BUFFER_BYTES);
  const reader = new ByteReader(
    {
      pause: () => {
        if (stream.readStatus === 'readable') stream.pause();
      },
      resume: () => {
        if (stream.readStatus === 'paused') stream.resume();
      },
    },
    highWater,
  );
  stream.addEventListener('message', (e) => reader.push(e.data instanceof Uint8Array ? e.data : e.data.subarray()));
  // 'close' can come while received bytes still wait in the stream's buffer (handed back by the
  // protocol negotiation, or held while paused): those are delivered first, then 'end' fires
  let closeError: Error | undefined;
  // on a reset 'end' can come before the 'close' that carries the error
  const broken = () => closeError ?? (stream.status === 'reset' || stream.status === 'aborted' ? new Error(`the stream was ${stream.status}`) : undefined);
  stream.addEventListener('end', () => reader.end(broken()), { once: true });
  stream.addEventListener(
    'close',
    (e) => {
      closeError = e.error ?? undefined;
      if (stream.readBufferLength === 0 || stream.status === 'aborted') reader.end(closeError);
    },
    { once: true },
  );
  if (stream.readableEnded) reader.end();
  return reader;
}

/** Sends bytes, waiting for the stream to drain when its buffer is full. */
export async function write(stream: Stream, bytes: Uint8Array, signal: AbortSignal): Promise<void> {
  if (!stream.send(bytes)) await stream.onDrain({ signal });
}

/** Closes our writable end (flushing what is queued) within the signal; resets the stream when that fails. */
export async function closeWrite(stream: Stream, signal: AbortSignal): Promise<void> {
  try {
    await stream.close({ signal });
  } catch (err) {
    reset(stream, err instanceof Error ? err : new Error(String(err)));
  }
}

/** Stops taking input: what the peer still sends waits in the stream, held to the window. */
export function stopReading(stream: Stream): void {
  if (stream.readStatus === 'readable') stream.pause();
}

export function reset(stream: Stream, reason: Error): void {
  if (stream.status === 'open' || stream.status === 'closing') stream.abort(reason);
}
