import { describe, expect, it } from 'vitest';
import { fakeFetch } from './fake-fetch.ts';
import { createClient, RpcError } from './index.ts';

const CTX = 'ab'.repeat(32);
const json = (body: unknown, status = 200) => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

describe('client.rpc', () => {
  it('sends a JSON-RPC 2.0 execute and answers result.output', async () => {
    const f = fakeFetch({ 'POST /jsonrpc': (r) => json({ jsonrpc: '2.0', id: (r.body as { id: number }).id, result: { output: { k: 'v' } } }) });
    const c = createClient({ baseUrl: 'http://node', fetch: f.fetch });
    expect(await c.rpc.execute(CTX, 'entries', {})).toEqual({ k: 'v' });
    expect(f.requests[0]!.body).toEqual({ jsonrpc: '2.0', id: 1, method: 'execute', params: { contextId: CTX, method: 'entries', argsJson: {} } });
  });

  it('answers null for a unit method and throws RpcError {type, data} for error objects', async () => {
    const f = fakeFetch({ 'POST /jsonrpc': () => json({ jsonrpc: '2.0', id: 1, result: { output: null } }) });
    const c = createClient({ baseUrl: 'http://node', fetch: f.fetch });
    expect(await c.rpc.execute(CTX, 'set', { key: 'k', value: 'v' })).toBeNull();
    f.on('POST /jsonrpc', () => json({ jsonrpc: '2.0', id: 1, error: { type: 'FunctionCallError', data: 'guest panicked: boom' } }));
    const err = await c.rpc.execute(CTX, 'panic').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RpcError);
    expect(err).toMatchObject({ type: 'FunctionCallError', data: 'guest panicked: boom', message: 'FunctionCallError: guest panicked: boom' });
    f.on('POST /jsonrpc', () => json({ jsonrpc: '2.0', id: 1, error: { type: 'ContextNotFound' } }));
    await expect(c.rpc.execute(CTX, 'get')).rejects.toMatchObject({ type: 'ContextNotFound', data: undefined });
  });
});
