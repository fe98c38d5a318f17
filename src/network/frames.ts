/**
 * The framing of hearth's request/response stream protocols (docs/network.md "Frame format";
 * domain.md §1.5: length-delimited frames, 4-byte big-endian length, at most 8 MiB).
 *
 * - The requester sends one request frame: `u32 length | body`, then closes its writable end.
 * - The responder answers with response frames: `u8 tag | u32 length | body`, where the tag is
 *   DATA (one response frame), END (the answer is complete; empty body), REFUSED (a UTF-8 reason;
 *   ends the exchange) or TOO_LARGE (the request's length prefix was past the responder's bound;
 *   UTF-8 reason; ends the exchange).
 *
 * Bounds are checked from the length prefix, before a body is read. `ByteReader` turns the chunks a
 * stream delivers into exact reads and pauses its source past a high-water mark, so a fast sender
 * costs at most the muxer's window; it knows nothing of libp2p (stream-io.ts feeds it).
 */
import { MAX_FRAME_BYTES } from './network-port.ts';

export const LENGTH_BYTES = 4;
export const RESPONSE_HEADER_BYTES = 1 + LENGTH_BYTES;
/** a refusal's reason is cut to this many bytes */
export const MAX_REASON_BYTES = 1024;

export const TAG = { data: 0, end: 1, refused: 2, tooLarge: 3 } as const;
export type Tag = (typeof TAG)[keyof typeof TAG];

/** Framing a peer got wrong: `oversized` carries the announced length. */
export class FramingError extends Error {
  override name = 'FramingError';
  constructor(
    readonly problem: 'cut_short' | 'bad_tag' | 'oversized',
    message: string,
    readonly length = 0,
  ) {
    super(message);
  }
}

export function requestFrame(body: Uint8Array): Uint8Array {
  const out = new Uint8Array(LENGTH_BYTES + body.byteLength);
  new DataView(out.buffer).setUint32(0, body.byteLength);
  out.set(body, LENGTH_BYTES);
  return out;
}

export function responseFrame(tag: Tag, body: Uint8Array = new Uint8Array(0)): Uint8Array {
  const out = new Uint8Array(RESPONSE_HEADER_BYTES + body.byteLength);
  out[0] = tag;
  new DataView(out.buffer).setUint32(1, body.byteLength);
  out.set(body, RESPONSE_HEADER_BYTES);
  return out;
}

/** A REFUSED or TOO_LARGE frame with a reason cut to `MAX_REASON_BYTES`. */
export function refusalFrame(tag: typeof TAG.refused | typeof TAG.tooLarge, reason: string): Uint8Array {
  return responseFrame(tag, Buffer.from(reason, 'utf8').subarray(0, MAX_REASON_BYTES));
}

export interface ByteSource {
  pause(): void;
  resume(): void;
}

/** Exact reads over pushed chunks; an end error surfaces only once the buffered bytes run out. */
export class ByteReader {
  private chunks: Uint8Array[] = [];
  private size = 0;
  private ended = false;
  private error: Error | undefined;
  private wake: (() => void) | undefined;
  private paused = false;
  /** bytes the pending read waits for */
  private want = 0;

  constructor(
    private readonly source: ByteSource,
    private readonly highWater: number,
  ) {}

  get buffered(): number {
    return this.size;
  }

  push(chunk: Uint8Array): void {
    if (this.ended || chunk.byteLength === 0) return;
    this.chunks.push(chunk);
    this.size += chunk.byteLength;
    // past the high-water mark, unless a read still waits for more than is here
    if (this.size > Math.max(this.highWater, this.want) && !this.paused) {
      this.paused = true;
      this.source.pause();
    }
    this.notify();
  }

  /** No more input: cleanly (`err` undefined) or because the stream broke. */
  end(err?: Error): void {
    if (this.ended) return;
    this.ended = true;
    this.error = err;
    this.notify();
  }

  /**
   * Exactly `n` bytes; null when the input ended cleanly before the first of them; a
   * `FramingError('cut_short')` when it ended cleanly inside them; the end error when it broke.
   */
  async read(n: number): Promise<Uint8Array | null> {
    this.want = n;
    while (this.size < n && !this.ended) {
      if (this.paused) {
        // asking for more than is buffered: let the sender go on (resuming may push at once)
        this.paused = false;
        this.source.resume();
        continue;
      }
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
    this.want = 0;
    if (this.size < n) {
      if (this.error) throw this.error;
      if (this.size === 0) return null;
      throw new FramingError('cut_short', `the stream ended ${n - this.size} bytes short`);
    }
    const out = this.take(n);
    if (this.paused && this.size <= this.highWater && !this.ended) {
      this.paused = false;
      this.source.resume();
    }
    return out;
  }

  private take(n: number): Uint8Array {
    const out = new Uint8Array(n);
    let at = 0;
    while (at < n) {
      const head = this.chunks[0]!;
      const part = Math.min(head.byteLength, n - at);
      out.set(head.subarray(0, part), at);
      at += part;
      if (part === head.byteLength) this.chunks.shift();
      else this.chunks[0] = head.subarray(part);
    }
    this.size -= n;
    return out;
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }
}

const lengthAt = (b: Uint8Array, at: number): number => new DataView(b.buffer, b.byteOffset, b.byteLength).getUint32(at);

/**
 * The request frame's length prefix; `FramingError('cut_short')` when the stream ends before it.
 * The caller checks its bounds before reading the body (`readBody`).
 */
export async function readRequestLength(reader: ByteReader): Promise<number> {
  const head = await reader.read(LENGTH_BYTES);
  if (head === null) throw new FramingError('cut_short', 'the stream ended before the request');
  return lengthAt(head, 0);
}

export type ResponseFrame =
  | { tag: typeof TAG.data; body: Uint8Array }
  | { tag: typeof TAG.end }
  | { tag: typeof TAG.refused; reason: string }
  | { tag: typeof TAG.tooLarge; reason: string };

/**
 * The next response frame. A DATA frame past `maxDataBytes` is a `FramingError('oversized')` (read
 * no further); an unknown tag, an END with a body or a reason past its bound is `bad_tag`; the
 * stream ending before END is `cut_short`.
 */
export async function readResponse(reader: ByteReader, maxDataBytes: number): Promise<ResponseFrame> {
  const head = await reader.read(RESPONSE_HEADER_BYTES);
  if (head === null) throw new FramingError('cut_short', 'the stream ended before the end of the answer');
  const tag = head[0];
  const length = lengthAt(head, 1);
  switch (tag) {
    case TAG.data: {
      const bound = Math.min(maxDataBytes, MAX_FRAME_BYTES);
      if (length > bound) throw new FramingError('oversized', `response frame of ${length} bytes exceeds ${bound}`, length);
      return { tag, body: await readBody(reader, length) };
    }
    case TAG.end:
      if (length !== 0) throw new FramingError('bad_tag', 'an end frame with a body');
      return { tag };
    case TAG.refused:
    case TAG.tooLarge:
      if (length > MAX_REASON_BYTES) throw new FramingError('bad_tag', `a refusal reason of ${length} bytes`);
      return { tag, reason: Buffer.from(await readBody(reader, length)).toString('utf8') };
    default:
      throw new FramingError('bad_tag', `unknown response tag ${tag}`);
  }
}

/** A frame body of `length` bytes; `FramingError('cut_short')` when the stream ends inside it. */
export async function readBody(reader: ByteReader, length: number): Promise<Uint8Array> {
  if (length === 0) return new Uint8Array(0);
  const body = await reader.read(length);
  if (body === null) throw new FramingError('cut_short', 'the stream ended inside a frame');
  return body;
}
