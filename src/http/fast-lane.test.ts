/**
 * Fast lanes over a real socket (fastify's `inject` never reaches them): a lane serves only what
 * the full pipeline would pass through, every other request reaches the full pipeline untouched,
 * and a lane's answers carry the headers, metrics and errors of the full pipeline's.
 */
import { request } from 'node:http';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { HearthError } from '../errors.ts';
import { buildApp, type App } from './app.ts';
import { Metrics } from './metrics.ts';

let app: App | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

/** An app whose POST /echo has a lane (answers `{lane, body, who}`) and a full route (answers `{full}`). */
async function laneApp(o: { gate?: (auth: string | undefined) => unknown } = {}) {
  const metrics = new Metrics();
  app = await buildApp({
    logger: pino({ level: 'silent' }),
    metrics,
    routes: (a) => {
      a.fastLanes.gate = (req) => (o.gate ?? ((auth) => (auth === 'Bearer good' ? 'someone' : undefined)))(req.headers.authorization);
      a.fastLanes.add({
        method: 'POST',
        path: '/echo',
        maxBody: 100,
        serve: (body, ex) => {
          const text = body.toString();
          if (text === '"refuse"') return ex.fail(new HearthError('unavailable', 'Busy', { retryAfterSecs: 2 }));
          if (text === '"deny"') return ex.fail(new HearthError('forbidden', 'No', { authReason: 'permission_denied' }));
          if (text === '"bug"') throw new Error('a bug');
          ex.json(200, JSON.stringify({ lane: true, body: JSON.parse(text), who: ex.sender }));
        },
      });
      a.post('/echo', async (req) => ({ full: true, body: req.body }));
    },
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const port = (app.server.address() as { port: number }).port;
  const send = (body: string, headers: Record<string, string> = {}, path = '/echo') =>
    new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Record<string, unknown> }>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, path, method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer good', ...headers } }, (res) => {
        let text = '';
        res.on('data', (d: Buffer) => (text += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: JSON.parse(text || 'null') as Record<string, unknown> }));
      });
      req.on('error', reject);
      req.end(body);
    });
  return { send, metrics };
}

describe('a fast lane', () => {
  it('serves an admitted small JSON POST with the headers and metrics every answer has', async () => {
    const { send, metrics } = await laneApp();
    const a = await send('{"x":1}');
    expect(a).toMatchObject({ status: 200, body: { lane: true, body: { x: 1 }, who: 'someone' } });
    expect(a.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(a.headers['content-length']).toBe(String(Buffer.byteLength(JSON.stringify(a.body))));
    expect(a.headers['x-request-id']).toMatch(/^[\w-]+-[0-9a-z]+$/);
    expect(a.headers['access-control-expose-headers']).toContain('x-auth-error');
    const b = await send('{"x":2}', { 'content-type': 'application/json; charset=utf-8' });
    expect(b.body.lane).toBe(true);
    expect(b.headers['x-request-id']).not.toBe(a.headers['x-request-id']);
    expect(await metrics.render()).toContain('http_requests_total{method="POST",path="/echo",status="2xx"} 2');
  });

  it('leaves to the full pipeline what it cannot take as it is', async () => {
    const { send } = await laneApp();
    const full = (r: { body: Record<string, unknown> }) => expect(r.body).toMatchObject({ full: true });
    full(await send('{"x":1}', { authorization: 'Bearer unknown' })); // the gate does not know the sender
    full(await send('{"x":1}', { origin: 'http://localhost:5173' })); // a browser: CORS headers
    full(await send(JSON.stringify({ x: 'y'.repeat(200) }))); // larger than the lane's maxBody
    full(await send('{"x":1}', { 'transfer-encoding': 'chunked' })); // a body of unknown size
    full(await send('{"x":1}', {}, '/echo?x=1')); // a query string
    full(await send('{"x":1}', { 'content-type': 'text/plain' })); // another type: the full pipeline's parsers
    expect((await send('', {})).status).toBe(400); // an empty JSON body: the full pipeline's 400
  });

  it('lets the full pipeline answer a sender the gate refuses', async () => {
    const { send } = await laneApp({
      gate: () => {
        throw new Error('refused');
      },
    });
    expect((await send('{"x":1}')).body).toMatchObject({ full: true });
  });

  it('answers errors as the error handler does: status, X-Auth-Error, Retry-After, a bare 500', async () => {
    const { send } = await laneApp();
    const busy = await send('"refuse"');
    expect(busy).toMatchObject({ status: 503, body: { error: 'Busy' } });
    expect(busy.headers['retry-after']).toBe('2');
    const denied = await send('"deny"');
    expect(denied).toMatchObject({ status: 403, body: { error: 'No' } });
    expect(denied.headers['x-auth-error']).toBe('permission_denied');
    const bug = await send('"bug"');
    expect(bug.status).toBe(500);
    expect(bug.body.error).toBe(`Internal server error (request ${String(bug.headers['x-request-id'])})`);
  });
});
