import { Ajv } from 'ajv';
import { describe, expect, it, vi } from 'vitest';
import { lazyValidators } from './lazy-validators.ts';

describe('lazy validators', () => {
  it('compile on first use and validate as the compiled validator does, errors included', () => {
    const compile = vi.spyOn(Ajv.prototype, 'compile');
    const build = lazyValidators()({}, { customOptions: { removeAdditional: false, coerceTypes: false, allErrors: false } });
    const validate = build({ schema: { type: 'object', required: ['a'], properties: { a: { type: 'string' } } }, method: 'POST', url: '/x', httpPart: 'body' });
    expect(compile).not.toHaveBeenCalled();
    expect(validate({ a: 'ok' })).toBe(true);
    expect(compile).toHaveBeenCalledTimes(1);
    expect(validate({})).toBe(false);
    expect(validate.errors).toMatchObject([{ keyword: 'required', params: { missingProperty: 'a' } }]);
    expect(validate({ a: 1 })).toBe(false);
    expect(validate.errors).toMatchObject([{ keyword: 'type', instancePath: '/a' }]);
    expect(compile).toHaveBeenCalledTimes(1);
    compile.mockRestore();
  });
});
