/**
 * Logger construction. Request logs carry method, route template, status and timing — never
 * headers, bodies or query strings, so tokens (`?token=`), passwords and keys cannot reach a log.
 */
import pino, { type Logger } from 'pino';

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

/** Log bytes held while the output cannot be written (a full disk): beyond this, lines are dropped. */
export const LOG_BACKLOG_BYTES = 8 * 1024 * 1024;

/**
 * `destination`: where the JSON lines go (default standard output); the CLI passes a formatter for people.
 *
 * A log that cannot be written never stops the node (issue #37 item 1): with standard output on a
 * full disk, pino's writer emitted an unhandled 'error' and the process died or hung. Lines now
 * wait (at most {@link LOG_BACKLOG_BYTES}) until the output takes them again, and are dropped
 * beyond that; a destination that throws loses that line only.
 */
export function createLogger(level: LogLevel = 'info', destination?: { write(line: string): void }): Logger {
  const opts: pino.LoggerOptions = {
    level,
    redact: {
      paths: ['*.password', '*.token', '*.access_token', '*.refresh_token', '*.authorization', '*.secret', 'req.headers'],
      censor: '[redacted]',
    },
  };
  return pino(opts, destination ? forgiving(destination) : standardOutput());
}

function standardOutput(): pino.DestinationStream {
  // synchronous: an asynchronous writer flushes its backlog at exit, and with the disk still full
  // that flush never ended (the process hung on exit)
  const out = pino.destination({ dest: 1, sync: true, maxLength: LOG_BACKLOG_BYTES });
  // ENOSPC, EIO, …: the backlog is written again with the next line; nothing to do here but not die
  out.on('error', () => undefined);
  return out;
}

function forgiving(destination: { write(line: string): void }): { write(line: string): void } {
  return {
    write(line) {
      try {
        destination.write(line);
      } catch {
        // the output failed (a file on a full disk): this line is lost, the caller goes on
      }
    },
  };
}

/** The path with the query string replaced, for logs. */
export function loggablePath(url: string): string {
  const q = url.indexOf('?');
  return q === -1 ? url : `${url.slice(0, q)}?…`;
}
