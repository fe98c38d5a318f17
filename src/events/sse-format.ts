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
