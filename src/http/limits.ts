/**
 * Connection limits of the HTTP server (issue #17 finding 1; docs/security.md "Limits"). Thousands of
 * idle connections once took every file descriptor, after which LevelDB could not open its files
 * and failed for good. The server therefore holds at most `max_connections` sockets (further ones
 * are closed on accept), derived by default from the process's descriptor limit with room kept for
 * the store, blob files and the runtime; and a connection that does not send its headers in time,
 * or idles between requests, is closed. Per-address quotas, reserved slots and body deadlines are
 * connections.ts (issue #23).
 */
import { readFileSync } from 'node:fs';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { FALLBACK_MAX_CONNECTIONS, FD_RESERVE } from '../config/defaults.ts';

export interface ConnectionLimits {
  /** 0 = derived from the descriptor limit */
  maxConnections: number;
  headerTimeoutSecs: number;
  keepAliveTimeoutSecs: number;
  requestTimeoutSecs: number;
  /** per-address quota, reserve and body deadlines (connections.ts); absent = the defaults */
  maxConnectionsPerAddress?: number;
  maxConnectionsPerGroup?: number;
  reservedConnections?: number;
  bodyTimeoutSecs?: number;
  bodyMinBytesPerSec?: number;
}

/** The soft limit on open files of this process (Linux `/proc/self/limits`); undefined when unknown or unlimited. */
export function readFdLimit(limitsFile = '/proc/self/limits'): number | undefined {
  try {
    const line = readFileSync(limitsFile, 'utf8')
      .split('\n')
      .find((l) => l.startsWith('Max open files'));
    const soft = line?.slice('Max open files'.length).trim().split(/\s+/)[0];
    const n = Number(soft);
    return Number.isSafeInteger(n) && n > 0 ? n : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The connection cap to apply: the configured one, but never so high that connections could take
 * the descriptors the store needs (`FD_RESERVE`), and at least 16 so a tiny limit still serves.
 * Answers the cap and, when the configuration had to be lowered, why.
 */
export function resolveMaxConnections(configured: number, fdLimit: number | undefined): { max: number; note?: string } {
  const ceiling = fdLimit === undefined ? undefined : Math.max(16, fdLimit - FD_RESERVE);
  if (configured <= 0) return { max: ceiling === undefined ? FALLBACK_MAX_CONNECTIONS : Math.min(ceiling, FALLBACK_MAX_CONNECTIONS * 8) };
  if (ceiling !== undefined && configured > ceiling) {
    return {
      max: ceiling,
      note: `server.max_connections ${configured} leaves no room for the store under the open-file limit ${fdLimit}; using ${ceiling}`,
    };
  }
  return { max: configured };
}

/**
 * Every connection must complete a request's headers within `ms`: from being accepted, and again
 * after each answer (before its next request), else it is closed. Node's own `headersTimeout` did
 * not close connections that never send a byte, nor reliably slow headers (tested on Node 20); idle
 * and trickling sockets are exactly what a descriptor-exhaustion flood is made of. A request whose
 * headers are in (a stream, a WebSocket upgrade, a long upload) is not limited by this.
 *
 * One sweep over the waiting connections every `ms / 8` (at most 1 s) closes those past their
 * deadline, rather than a timer armed and cleared per request (issue #14: a timer per request was a
 * visible part of a request's cost). A connection therefore goes between `ms` and `ms` plus one
 * sweep after it started waiting, never before. Answers a function that stops the sweeps.
 */
export function enforceHeaderDeadline(server: Server, ms: number, onExpire?: () => void): () => void {
  const watchdog = new HeaderWatchdog(ms, undefined, onExpire);
  server.on('connection', (socket: Socket) => {
    watchdog.arm(socket);
    socket.once('close', () => watchdog.disarm(socket));
  });
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    watchdog.disarm(req.socket);
    res.on('finish', watchdog.rearmAfter);
  });
  server.on('upgrade', (req: IncomingMessage) => watchdog.disarm(req.socket));
  server.once('close', () => watchdog.stop());
  return () => watchdog.stop();
}

/** Longest time between sweeps: a deadline is kept to within this much. */
const MAX_SWEEP_MS = 1_000;

/** The connections waiting for a request's headers, each with its deadline, swept on one timer. */
export class HeaderWatchdog {
  /** socket → the time (ms, on `now`) it must have sent a request's headers by */
  private readonly waiting = new Map<Socket, number>();
  private timer: NodeJS.Timeout | undefined;
  private readonly sweepMs: number;

  constructor(
    private readonly ms: number,
    /** a monotonic clock in ms (wall-clock changes must not close or spare connections) */
    private readonly now: () => number = () => performance.now(),
    /** called once per connection closed by the deadline (counted, docs/security.md) */
    private readonly onExpire?: () => void,
  ) {
    this.sweepMs = Math.max(1, Math.min(MAX_SWEEP_MS, Math.ceil(ms / 8)));
    const watchdog = this;
    this.rearmAfter = function (this: ServerResponse) {
      // the request's socket is null once Node detached it (a connection that ended while its
      // answer was written, e.g. an upload refused mid-body): nothing waits for a next request.
      // Reading it unchecked crashed the node (issue #37 item 1).
      const socket = this.req?.socket;
      if (socket && !socket.destroyed) watchdog.arm(socket);
    };
  }

  arm(socket: Socket): void {
    this.waiting.set(socket, this.now() + this.ms);
    if (this.timer === undefined) {
      this.timer = setInterval(() => this.sweep(), this.sweepMs);
      this.timer.unref();
    }
  }

  disarm(socket: Socket): void {
    this.waiting.delete(socket);
  }

  /**
   * A response's 'finish' listener (`this` is the response): its connection waits for the next
   * request. One function for every response, so a request allocates no listener.
   */
  readonly rearmAfter: (this: ServerResponse) => void;

  /** Closes every connection past its deadline; the timer stops while none waits. */
  sweep(): void {
    const now = this.now();
    for (const [socket, deadline] of this.waiting) {
      if (deadline > now) continue;
      this.waiting.delete(socket);
      socket.destroy();
      this.onExpire?.();
    }
    if (this.waiting.size === 0) this.stop();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** connections waiting for headers now (tests) */
  get size(): number {
    return this.waiting.size;
  }
}
