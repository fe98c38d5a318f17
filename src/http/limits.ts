/**
 * Connection limits of the HTTP server (issue #17 finding 1; docs/security.md "Limits"). Thousands of
 * idle connections once took every file descriptor, after which LevelDB could not open its files
 * and failed for good. The server therefore holds at most `max_connections` sockets (further ones
 * are closed on accept), derived by default from the process's descriptor limit with room kept for
 * the store, blob files and the runtime; and a connection that does not send its headers in time,
 * or idles between requests, is closed.
 */
import { readFileSync } from 'node:fs';
import type { Server } from 'node:http';
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

/** Applies the limits to the node's HTTP server (before it listens). */
export function applyConnectionLimits(server: Server, limits: ConnectionLimits & { maxConnections: number }): void {
  server.maxConnections = limits.maxConnections;
  server.headersTimeout = limits.headerTimeoutSecs * 1000;
  server.keepAliveTimeout = limits.keepAliveTimeoutSecs * 1000;
  server.requestTimeout = limits.requestTimeoutSecs * 1000;
}
