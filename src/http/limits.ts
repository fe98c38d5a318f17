/**
 * Connection limits of the HTTP server (issue #17 finding 1; docs/security.md "Limits"). Thousands of
 * idle connections once took every file descriptor, after which LevelDB could not open its files
 * and failed for good. The server therefore holds at most `max_connections` sockets (further ones
 * are closed on accept), derived by default from the process's descriptor limit with room kept for
 * the store, blob files and the runtime; and a connection that does not send its headers in time,
 * or idles between requests, is closed.
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
 */
export function enforceHeaderDeadline(server: Server, ms: number): void {
  const arm = (socket: Socket) => {
    clearTimeout(timers.get(socket));
    const timer = setTimeout(() => socket.destroy(), ms);
    timer.unref();
    timers.set(socket, timer);
  };
  const disarm = (socket: Socket) => clearTimeout(timers.get(socket));
  const timers = new WeakMap<Socket, NodeJS.Timeout>();
  server.on('connection', (socket: Socket) => {
    arm(socket);
    socket.once('close', () => disarm(socket));
  });
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    disarm(req.socket);
    res.once('finish', () => {
      if (!req.socket.destroyed) arm(req.socket);
    });
  });
  server.on('upgrade', (req: IncomingMessage) => disarm(req.socket));
}
