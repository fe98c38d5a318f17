/** The cross-cutting request handling of buildApp: request ids and the access-log level (issue #14). */
import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { buildApp, requestIds } from './app.ts';

/** An app with one route whose logger writes JSON lines into `lines`. */
async function appLogging(level: string, accessLog?: boolean) {
  const lines: Array<{ level: number; msg: string; route?: string; status?: number; reqId?: string }> = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString().split('\n')) if (l) lines.push(JSON.parse(l));
      done();
    },
  });
  const app = await buildApp({
    logger: pino({ level }, sink),
    accessLog,
    routes: (a) => {
      a.get('/thing', async () => ({ ok: true }));
      a.get('/admin-api/health', async () => ({ data: { status: 'alive' } }));
    },
  });
  return { app, requests: () => lines.filter((l) => l.msg === 'request') };
}

describe('request ids', () => {
  it('are distinct, share a per-process prefix, and differ between processes (prefixes)', () => {
    const next = requestIds();
    const ids = Array.from({ length: 1000 }, next);
    expect(new Set(ids).size).toBe(1000);
    const prefix = ids[0]!.split('-')[0];
    expect(ids.every((id) => id.startsWith(`${prefix}-`))).toBe(true);
    expect(requestIds()().split('-')[0]).not.toBe(prefix);
  });

  it('are answered as X-Request-Id', async () => {
    const { app } = await appLogging('silent');
    const [a, b] = [await app.inject('/thing'), await app.inject('/thing')];
    expect(a.headers['x-request-id']).toMatch(/^[\w-]+-[0-9a-z]+$/);
    expect(a.headers['x-request-id']).not.toBe(b.headers['x-request-id']);
  });
});

describe('access log', () => {
  it('logs answered requests at debug by default: nothing at info', async () => {
    const info = await appLogging('info');
    await info.app.inject('/thing');
    expect(info.requests()).toEqual([]);
    const debug = await appLogging('debug');
    await debug.app.inject('/thing');
    expect(debug.requests()).toMatchObject([{ level: 20, route: '/thing', status: 200 }]);
  });

  it('logs one info line per request when the operator asks (server.access_log)', async () => {
    const { app, requests } = await appLogging('info', true);
    const answered = await app.inject('/thing');
    await app.inject('/nowhere?token=secret');
    // successful probes stay at debug: orchestrators poll them
    await app.inject('/admin-api/health');
    expect(requests()).toMatchObject([
      { level: 30, route: '/thing', status: 200 },
      { level: 30, route: '/nowhere?…', status: 404 },
    ]);
    // the per-request logger (made when the request logs) carries the request id
    expect(requests()[0]!.reqId).toBe(answered.headers['x-request-id']);
  });
});
