import { describe, expect, it } from 'vitest';
import { exportOutputs } from './run.ts';
import { errorInfo } from './steps/calls.ts';
import { RpcError } from '../../client/index.ts';

describe('outputs: what a step exports', () => {
  const response = { jsonrpc: '2.0', result: { output: '{"n": 2}' }, contextId: 'c1', list: [{ id: 'a' }] };

  it('copies named fields, dotted paths (JSON text read on the way) and {field, path, target}', () => {
    const values: Record<string, unknown> = {};
    const exported = exportOutputs({ ctx: 'contextId', n: 'result.output.n', first: 'list.0.id', renamed: { field: 'result', path: 'output', target: 'out' } }, response, values);
    expect(exported).toEqual({ ctx: 'c1', n: 2, first: 'a', out: { n: 2 } });
    expect(values).toEqual(exported);
  });

  it('reads a `data` envelope as merobox does, and reports a field that is not there without exporting it', () => {
    const missing: string[] = [];
    const values: Record<string, unknown> = {};
    exportOutputs({ id: 'applicationId', nope: 'nothing' }, { data: { applicationId: 'x' } }, values, { exported: () => undefined, missing: (n, f) => missing.push(`${n}<-${f}`) });
    expect(values).toEqual({ id: 'x' });
    expect(missing).toEqual(['nope<-nothing']);
  });

  it('says which exports are marked secret: true (the value is exported all the same)', () => {
    const seen: string[] = [];
    const values: Record<string, unknown> = {};
    exportOutputs({ key: { field: 'stdout', secret: true }, code: { field: 'exit_code' }, out: 'stdout' }, { stdout: 'ab12', exit_code: 0 }, values, { exported: (n, _v, secret) => seen.push(`${n}${secret ? ' secret' : ''}`), missing: () => undefined });
    expect(values).toEqual({ key: 'ab12', code: 0, out: 'ab12' });
    expect(seen).toEqual(['key secret', 'code', 'out']);
  });

  it('exports the error fields of an expected failure', () => {
    const values: Record<string, unknown> = {};
    exportOutputs({ t: 'error_type', m: 'error_message' }, errorInfo(new RpcError('FunctionCallError', 'boom')), values);
    expect(values.t).toBe('FunctionCallError');
    expect(values.m).toMatch(/boom/);
  });
});
