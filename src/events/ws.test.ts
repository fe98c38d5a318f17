/** The `/ws` error objects (admin-wire-a §8.3): which node errors are the caller's and which are not. */
import { describe, expect, it } from 'vitest';
import { RpcMethodError } from '../contexts/rpc-methods.ts';
import { HearthError, badRequest, conflict, forbidden, notFound, rateLimited, unauthenticated, unavailable } from '../errors.ts';
import { errorObject } from './ws.ts';

describe('WebSocket error objects', () => {
  it('keeps an RPC method error as it was typed', () => {
    expect(errorObject(new RpcMethodError('ParseError', 'bad'))).toEqual({ type: 'ParseError', data: 'bad' });
  });

  it('names refusals Unauthorized', () => {
    expect(errorObject(forbidden('no'))).toEqual({ type: 'Unauthorized', data: 'no' });
    expect(errorObject(unauthenticated('who'))).toEqual({ type: 'Unauthorized', data: 'who' });
  });

  it('names faults of the request ParseError', () => {
    expect(errorObject(badRequest('params.method is missing'))).toEqual({ type: 'ParseError', data: 'params.method is missing' });
    expect(errorObject(notFound('context x not found'))).toEqual({ type: 'ParseError', data: 'context x not found' });
    expect(errorObject(new HearthError('payload_too_large', 'too big')).type).toBe('ParseError');
  });

  it('does not call a busy or timed-out node a parse error', () => {
    expect(errorObject(unavailable('runtime busy: retry later'))).toEqual({ type: 'InternalError', data: 'runtime busy: retry later' });
    expect(errorObject(rateLimited('slow down', 1))).toEqual({ type: 'InternalError', data: 'slow down' });
    expect(errorObject(new HearthError('gateway_timeout', 'deadline passed')).type).toBe('InternalError');
    expect(errorObject(conflict('state moved')).type).toBe('InternalError');
  });

  it('hides the details of an unexpected error', () => {
    expect(errorObject(new Error('secret path /root/x'))).toEqual({ type: 'InternalError', data: {} });
  });
});
