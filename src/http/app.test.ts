/** The cross-cutting request handling of buildApp: request ids and the access-log level (issue #14). */
import net from 'node:net';
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

// issue #23 section 1: a body must arrive by its deadline; a request that passed the guard gets its size at the minimum rate on top
describe('body deadlines', () => {
  async function serve() {
    const app = await buildApp({
      logger: pino({ level: 'silent' }),
      connections: { maxConnections: 0, headerTimeoutSecs: 10, keepAliveTimeoutSecs: 5, requestTimeoutSecs: 600, bodyTimeoutSecs: 1, bodyMinBytesPerSec: 200 },
      routes: (a) => {
        // a stand-in guard that decides synchronously, as the real one does for cached tokens
        a.addHook('onRequest', (req, _reply, done) => {
          if (req.headers.authorization === 'Bearer ok') req.principal = { keyId: 'k', keyType: 'root', rootKeyId: 'k', permissions: [], binding: { contexts: [], groups: [], applications: [] } };
          done();
        });
        a.post('/echo', async (req) => ({ got: JSON.stringify(req.body).length }));
      },
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    return { app, port: (app.server.address() as net.AddressInfo).port };
  }

  /** POSTs a 1,000-byte JSON body in 100-byte pieces every 200 ms; answers the status line, or null when closed unanswered. */
  function trickle(port: number, auth: string): Promise<string | null> {
    return new Promise((resolve) => {
      const body = JSON.stringify({ pad: 'x'.repeat(988) });
      const s = net.connect(port, '127.0.0.1');
      let text = '';
      s.on('data', (d) => (text += d.toString()));
      s.on('error', () => undefined);
      s.on('close', () => (clearInterval(timer), resolve(text ? text.split('\r\n')[0]! : null)));
      s.write(`POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n${auth}Connection: close\r\n\r\n`);
      let sent = 0;
      const timer = setInterval(() => {
        if (sent < body.length) s.write(body.slice(sent, (sent += 100)));
      }, 200);
    });
  }

  it('closes an anonymous trickling body at the deadline; serves a guarded one sent at more than the minimum rate', async () => {
    const { app, port } = await serve();
    try {
      const [anon, authed] = await Promise.all([trickle(port, ''), trickle(port, 'Authorization: Bearer ok\r\n')]);
      expect(anon).toBeNull(); // ~2 s of body against a 1 s deadline
      expect(authed).toBe('HTTP/1.1 200 OK'); // 1 s + 1,000 bytes at 200 B/s = 6 s
    } finally {
      await app.close();
    }
  }, 20_000);
});
