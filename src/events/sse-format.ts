/**
 * The SSE wire encoding (WHATWG "Server-sent events"; admin-wire-a §8.1): `field:value` lines with
 * no space after the colon, a blank line after each frame, every frame `event:message`. A frame's
 * data is one line of compact JSON, because the official SDK reads each `data:` line as a whole
 * JSON document. Newlines in `id`, `event` or `data` would split or forge frames, so they throw.
 */

export interface SseFrame {
  id?: string;
  retry?: number;
  data: string;
}

const LINE_BREAK = /[\r\n]/;

export function encodeSseFrame(f: SseFrame): string {
  if (LINE_BREAK.test(f.data)) throw new Error('SSE data must be a single line');
  let out = 'event:message\n';
  if (f.id !== undefined) {
    if (LINE_BREAK.test(f.id) || f.id.includes('\0')) throw new Error('SSE id must be a single line without NUL');
    out += `id:${f.id}\n`;
  }
  if (f.retry !== undefined) out += `retry:${Math.max(0, Math.floor(f.retry))}\n`;
  return `${out}data:${f.data}\n\n`;
}

/** The keep-alive comment frame (the reference's axum default: an empty comment). */
export const SSE_HEARTBEAT = ':\n\n';

/** `<session>-<n>`, the frame id format (the reference's). */
export const frameId = (sessionId: string, n: number): string => `${sessionId}-${n}`;

/** Parses a `Last-Event-ID` of the form `<session>-<n>`; null when it is not one. */
export function parseFrameId(value: string | undefined): { sessionId: string; n: number } | null {
  if (value === undefined) return null;
  const m = /^(\d{1,20})-(\d{1,15})$/.exec(value.trim());
  return m ? { sessionId: m[1], n: Number(m[2]) } : null;
}

/**
 * The part of a frame every stream of one event shares, `data:<json>\n\n`, encoded once (issue #22:
 * a fan-out to N streams serialised and encoded each frame N times). The last one is kept: the hub
 * hands the same JSON to every subscriber of an event in a row.
 */
let lastData: string | undefined;
let lastTail: Buffer | undefined;
export function frameTail(data: string): Buffer {
  if (data === lastData && lastTail) return lastTail;
  if (LINE_BREAK.test(data)) throw new Error('SSE data must be a single line');
  lastTail = Buffer.from(`data:${data}\n\n`);
  lastData = data;
  return lastTail;
}

/**
 * One numbered frame as the bytes that go on the socket: `event:message\nid:<id>\n` then the shared
 * tail, wrapped as one HTTP/1.1 chunk when the response is chunked (`<hex length>\r\n…\r\n`, what
 * `ServerResponse.write` would have framed). `id` is `frameId(...)`: digits and a dash.
 */
export function frameBytes(id: string, tail: Buffer, chunked: boolean): Buffer {
  const head = `event:message\nid:${id}\n`;
  const size = head.length + tail.length;
  const prefix = chunked ? `${size.toString(16)}\r\n` : '';
  const out = Buffer.allocUnsafe(prefix.length + size + (chunked ? 2 : 0));
  let at = out.write(prefix, 0, 'latin1');
  at += out.write(head, at, 'latin1');
  at += tail.copy(out, at);
  if (chunked) out.write('\r\n', at, 'latin1');
  return out;
}

/** Any other text (heartbeat, close frame) as socket bytes, chunk-framed when the response is chunked. */
export function rawBytes(text: string, chunked: boolean): Buffer {
  const body = Buffer.from(text);
  return chunked ? Buffer.concat([Buffer.from(`${body.length.toString(16)}\r\n`, 'latin1'), body, Buffer.from('\r\n', 'latin1')]) : body;
}
