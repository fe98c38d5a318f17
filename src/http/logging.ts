/**
 * Logger construction. Request logs carry method, route template, status and timing — never
 * headers, bodies or query strings, so tokens (`?token=`), passwords and keys cannot reach a log.
 */
import pino, { type Logger } from 'pino';

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

/** `destination`: where the JSON lines go (default standard output); the CLI passes a formatter for people. */
export function createLogger(level: LogLevel = 'info', destination?: { write(line: string): void }): Logger {
  const opts: pino.LoggerOptions = {
    level,
    redact: {
      paths: ['*.password', '*.token', '*.access_token', '*.refresh_token', '*.authorization', '*.secret', 'req.headers'],
      censor: '[redacted]',
    },
  };
  return destination ? pino(opts, destination) : pino(opts);
}

/** The path with the query string replaced, for logs. */
export function loggablePath(url: string): string {
  const q = url.indexOf('?');
  return q === -1 ? url : `${url.slice(0, q)}?…`;
}
