/**
 * One SSE session and the HTTP connection currently attached to it (admin-wire-a §8.1;
 * docs/events.md "Resume contract").
 *
 * A session outlives its connections: it keeps its subscriptions, its frame counter and a bounded
 * replay buffer of its recent frames, also while no client is connected. The buffer is also the
 * connection's send queue: a connection remembers the last frame number it wrote and writes on
 * while the socket accepts data. When more than `queueFrames` frames that arrived after it opened
 * are still unsent (a slow or dead consumer) it is closed with a reason; the session and its
 * buffer stay, so the client can resume. A replayed backlog does not count: the buffer bounds it.
 */
import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Readable, Writable } from 'node:stream';
import type { Principal } from '../auth/index.ts';
import { closeJson } from './frames.ts';
import type { Sink } from './hub.ts';
import { ReplayRing } from './ring.ts';
import { SSE_HEARTBEAT, encodeSseFrame, frameBytes, frameId, frameTail, rawBytes } from './sse-format.ts';

export interface SseLimits {
  replayFrames: number;
  queueFrames: number;
  heartbeatMs: number;
  closeFlushMs: number;
}

export class SseSession implements Sink {
  readonly ring: ReplayRing;
  /** subscription topics (`c:<id>`, `g:<id>`) */
  readonly topics = new Set<string>();
  private conn: SseConnection | null = null;
  /** when the last connection went away; null while one is attached */
  detachedAt: number | null;

  constructor(
    readonly id: string,
    /** the key that opened it: only that key may use it (reference: session owner) */
    readonly owner: string,
    public principal: Principal,
    private readonly limits: SseLimits,
    private readonly now: () => number,
    private readonly onDrop: (session: SseSession, reason: string) => void,
  ) {
    this.ring = new ReplayRing(limits.replayFrames);
    this.detachedAt = now();
  }

  get connected(): boolean {
    return this.conn !== null;
  }

  deliver(json: string): void {
    this.ring.push(json);
    this.conn?.pump();
  }

  /**
   * Attaches a response stream: writes `head` (connect frame, gap frame) and then every buffered
   * frame after `sentUpTo`. A connection already attached is closed first (one reader per session).
   * With `raw`, the HTTP response `res` is piped into, frames go straight to its socket once `res`
   * has handed it everything (see `SseConnection.out`).
   */
  attach(res: Writable, head: string[], sentUpTo: number, raw?: ServerResponse): void {
    this.conn?.close('replaced: another connection resumed this session');
    const conn = new SseConnection(res, raw, this, sentUpTo, this.limits, (reason) => {
      if (this.conn !== conn) return;
      this.conn = null;
      this.detachedAt = this.now();
      if (reason !== undefined) this.onDrop(this, reason);
    });
    this.conn = conn;
    this.detachedAt = null;
    conn.open(head);
  }

  /** Closes the attached connection, if any, with a final close frame. */
  disconnect(reason: string): void {
    this.conn?.close(reason);
  }
}

/**
 * Sockets written to in this tick, uncorked together on the next one: a call's frames go out after
 * the code that published them has run on (the call's own answer is written first, as when frames
 * went through the HTTP response, which corks the same way), and a socket given several frames in a
 * tick sends them in one write.
 */
const corked = new Set<Socket>();
function uncorkAll(): void {
  for (const socket of corked) socket.uncork();
  corked.clear();
}
function corkedWrite(socket: Socket, bytes: Buffer): void {
  if (!corked.has(socket)) {
    if (corked.size === 0) process.nextTick(uncorkAll);
    socket.cork();
    corked.add(socket);
  }
  socket.write(bytes);
}

/**
 * One attached connection. Frames go through `res`, the body stream the route handed to fastify
 * (so the answer's headers and hooks are fastify's), until that stream has passed everything on to
 * the HTTP response; from then on straight to the response's socket, as the bytes the response would
 * have written (chunk-framed when it is chunked). A fan-out to a thousand streams then costs one
 * buffer and one socket write each, where the stream → pipe → response → cork → writev path cost a
 * fifth more CPU and most of the garbage (docs/performance.md "SSE fan-out").
 */
class SseConnection {
  private closed = false;
  private heartbeat?: NodeJS.Timeout;
  /** newest frame at attach time: the replayed backlog before it does not count as lag */
  private readonly openedAt: number;
  /** the socket frames are written to directly, once the body stream is drained */
  private direct: Socket | null = null;
  private chunked = false;

  constructor(
    private readonly res: Writable,
    private readonly raw: ServerResponse | undefined,
    private readonly session: SseSession,
    private sent: number,
    private readonly limits: SseLimits,
    /** reason set when the node closed it; undefined when the client went away */
    private readonly onClosed: (reason?: string) => void,
  ) {
    this.openedAt = session.ring.last;
  }

  open(head: string[]): void {
    this.res.on('close', () => this.gone());
    this.res.on('drain', () => this.pump());
    for (const frame of head) this.res.write(frame);
    this.heartbeat = setTimeout(() => this.beat(), this.limits.heartbeatMs);
    this.heartbeat.unref();
    this.pump();
  }

  /** Writes buffered frames while the socket takes them; drops the connection when too far behind. */
  pump(): void {
    const ring = this.session.ring;
    while (!this.closed && this.sent < ring.last) {
      if (ring.last - Math.max(this.sent, this.openedAt) > this.limits.queueFrames) {
        this.close(`slow consumer: more than ${this.limits.queueFrames} frames undelivered; reconnect with Last-Event-ID to resume`);
        return;
      }
      const out = this.out();
      if (out.writableNeedDrain || out.destroyed || out.writableEnded) return; // a socket gone: `gone` follows
      const data = ring.get(this.sent + 1);
      if (data === undefined) {
        this.close('slow consumer: frames left the replay buffer before they were sent');
        return;
      }
      this.sent += 1;
      const id = frameId(this.session.id, this.sent);
      if (this.direct) corkedWrite(this.direct, frameBytes(id, frameTail(data), this.chunked));
      else out.write(encodeSseFrame({ id, data }));
      this.heartbeat?.refresh();
    }
  }

  /**
   * Where the next frame goes: the response's socket once nothing written before is still on its way
   * through the body stream and the response (headers sent, stream flowing and empty, socket open),
   * so bytes stay in order; the body stream before that, or when the response's framing is unknown.
   */
  private out(): Writable {
    if (this.direct) return this.direct;
    const raw = this.raw;
    const body = this.res as Writable & Partial<Pick<Readable, 'readableFlowing' | 'readableLength'>>;
    const chunked = (raw as { chunkedEncoding?: unknown } | undefined)?.chunkedEncoding;
    const socket = raw?.socket;
    // a HEAD answer has no body: the response drops what is written to it, a socket would not
    if (!raw || !socket || raw.req?.method !== 'GET' || !raw.headersSent || typeof chunked !== 'boolean' || socket.destroyed || socket.writableEnded) return this.res;
    if (body.readableFlowing !== true || body.readableLength !== 0 || body.writableLength !== 0 || raw.writableLength !== 0) return this.res;
    this.direct = socket;
    this.chunked = chunked;
    socket.on('drain', () => this.pump());
    return socket;
  }

  /** Text other than a numbered frame (heartbeat, close frame), by whichever way frames go now. */
  private writeText(text: string): void {
    const out = this.out();
    if (this.direct) {
      if (!this.direct.destroyed && !this.direct.writableEnded) corkedWrite(this.direct, rawBytes(text, this.chunked));
    } else out.write(text);
  }

  /** Ends the stream with a close frame; the socket is destroyed if it cannot flush in time. */
  close(reason: string): void {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.heartbeat);
    if (!this.res.destroyed && !this.res.writableEnded) {
      // the close frame goes the way frames went; the body stream's end then ends the response
      this.writeText(encodeSseFrame({ data: closeJson(reason) }));
      this.res.end();
      // what has to flush in time: the socket once frames go to it (the body stream is empty then)
      const flushing: Writable = this.direct ?? this.res;
      const killer = setTimeout(() => flushing.destroy(), this.limits.closeFlushMs);
      killer.unref();
      flushing.once('close', () => clearTimeout(killer));
    }
    this.onClosed(reason);
  }

  private beat(): void {
    if (this.closed) return;
    // A socket that is not draining needs no keep-alive; the lag check will deal with it.
    if (!this.out().writableNeedDrain) this.writeText(SSE_HEARTBEAT);
    this.heartbeat?.refresh();
  }

  private gone(): void {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.heartbeat);
    this.onClosed();
  }
}
