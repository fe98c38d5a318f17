/**
 * Logger construction. Request logs carry method, route template, status and timing — never
 * headers, bodies or query strings, so tokens (`?token=`), passwords and keys cannot reach a log.
 */
import pino, { type Logger } from 'pino';

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

export function createLogger(level: LogLevel = 'info'): Logger {
  return pino({
    level,
    redact: {
      paths: ['*.password', '*.token', '*.access_token', '*.refresh_token', '*.authorization', '*.secret', 'req.headers'],
      censor: '[redacted]',
    },
  });
}

/** The path with the query string replaced, for logs. */
export function loggablePath(url: string): string {
  const q = url.indexOf('?');
  return q === -1 ? url : `${url.slice(0, q)}?…`;
}
