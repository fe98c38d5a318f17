/** The per-request logger made on first use (request-logger.ts, issue #14). */
import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { lazyChildLogger } from './request-logger.ts';

function sink() {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString().split('\n')) if (l) lines.push(JSON.parse(l));
      done();
    },
  });
  return { lines, stream };
}

describe('lazyChildLogger', () => {
  it('makes no pino child until the request logs, then logs as the child fastify would have made', () => {
    const { lines, stream } = sink();
    const parent = pino({ level: 'info', redact: { paths: ['*.token'], censor: '[redacted]' } }, stream);
    let made = 0;
    const child = parent.child.bind(parent);
    parent.child = ((...args: Parameters<typeof child>) => (made++, child(...args))) as typeof parent.child;
    const log = lazyChildLogger(parent, { reqId: 'r-1' }, {});
    expect(made).toBe(0);
    log.debug('below the level');
    expect(lines).toEqual([]);
    log.info({ auth: { token: 'secret' } }, 'hello');
    log.warn('again');
    expect(made).toBe(1);
    expect(lines).toMatchObject([
      { level: 30, reqId: 'r-1', msg: 'hello', auth: { token: '[redacted]' } },
      { level: 40, reqId: 'r-1', msg: 'again' },
    ]);
    expect(log.level).toBe('info');
  });

  it('honours a route log level given in the options', () => {
    const { lines, stream } = sink();
    const log = lazyChildLogger(pino({ level: 'info' }, stream), { reqId: 'r-2' }, { level: 'warn' });
    log.info('dropped');
    log.error('kept');
    expect(lines.map((l) => l.msg)).toEqual(['kept']);
  });
});
