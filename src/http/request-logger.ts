/**
 * fastify's per-request logger (`request.log`, `reply.log`), made when the request first logs
 * (issue #14). fastify makes a pino child per request for its `reqId` binding; with the node's
 * redaction paths that child was a visible part of every request's cost, and most requests log
 * nothing (access lines are at debug unless `server.access_log`). The child is the same one fastify
 * would have made, with the same bindings and options, only later.
 */
import type { Bindings, ChildLoggerOptions, Logger } from 'pino';
import type { FastifyBaseLogger } from 'fastify';

type Args = [unknown, ...unknown[]];

class LazyChild {
  #made: Logger | undefined;

  constructor(
    private readonly parent: Logger,
    private readonly bound: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {}

  /** the pino child itself, made on first use */
  get logger(): Logger {
    return (this.#made ??= this.parent.child(this.bound, this.options));
  }

  get level(): string {
    return this.logger.level;
  }
  set level(level: string) {
    this.logger.level = level;
  }

  fatal(...args: Args): void {
    (this.logger.fatal as (...a: Args) => void)(...args);
  }
  error(...args: Args): void {
    (this.logger.error as (...a: Args) => void)(...args);
  }
  warn(...args: Args): void {
    (this.logger.warn as (...a: Args) => void)(...args);
  }
  info(...args: Args): void {
    (this.logger.info as (...a: Args) => void)(...args);
  }
  debug(...args: Args): void {
    (this.logger.debug as (...a: Args) => void)(...args);
  }
  trace(...args: Args): void {
    (this.logger.trace as (...a: Args) => void)(...args);
  }
  silent(): void {}

  child(bindings: Bindings, options?: ChildLoggerOptions): Logger {
    return this.logger.child(bindings, options);
  }
  isLevelEnabled(level: string): boolean {
    return this.logger.isLevelEnabled(level);
  }
  bindings(): Bindings {
    return this.logger.bindings();
  }
  flush(cb?: (err?: Error) => void): void {
    this.logger.flush(cb);
  }
}

/** fastify's `childLoggerFactory`: the request's child logger, made on first use. */
export function lazyChildLogger(parent: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions): FastifyBaseLogger {
  return new LazyChild(parent as Logger, bindings, options) as unknown as FastifyBaseLogger;
}
