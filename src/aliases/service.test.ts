/** Unit tests of the alias rules (admin-wire-a §6.1) over the in-memory store. */
import { beforeEach, describe, expect, it } from 'vitest';
import { HearthError } from '../errors.ts';
import { MemoryStore } from '../store/memory.ts';
import { AliasService, parseScope, parseTargetId, validateAlias } from './service.ts';

const CTX = 'ab'.repeat(32);
const APP = 'cd'.repeat(32);
// base58 of 32 zero bytes, as an older client would send an id
const ZERO_B58 = '11111111111111111111111111111111';

async function failure(p: Promise<unknown> | (() => unknown)): Promise<HearthError> {
  const err = await Promise.resolve()
    .then(() => (typeof p === 'function' ? p() : p))
    .then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(HearthError);
  return err as HearthError;
}

let store: MemoryStore;
let aliases: AliasService;
beforeEach(async () => {
  store = new MemoryStore();
  await store.open();
  aliases = new AliasService({ store });
});

describe('AliasService', () => {
  it('creates, looks up, lists and deletes in each scope', async () => {
    for (const scope of ['context', 'application', 'device'] as const) {
      await aliases.create(scope, 'main', CTX);
      expect(await aliases.lookup(scope, 'main')).toBe(CTX);
      expect(await aliases.list(scope)).toEqual({ main: CTX });
      await aliases.delete(scope, 'main');
      expect(await aliases.lookup(scope, 'main')).toBeNull();
      expect(await aliases.list(scope)).toEqual({});
    }
  });

  it('keeps scopes apart: the same alias may name different ids per scope', async () => {
    await aliases.create('context', 'x', CTX);
    await aliases.create('application', 'x', APP);
    expect(await aliases.lookup('context', 'x')).toBe(CTX);
    expect(await aliases.lookup('application', 'x')).toBe(APP);
    expect(await aliases.lookup('device', 'x')).toBeNull();
    expect(await aliases.list('device')).toEqual({});
  });

  it('lists as a flat map ordered by alias', async () => {
    await aliases.create('context', 'b', CTX);
    await aliases.create('context', 'a', APP);
    await aliases.create('context', 'C', CTX);
    const list = await aliases.list('context');
    expect(list).toEqual({ C: CTX, a: APP, b: CTX });
    expect(Object.keys(list)).toEqual(['C', 'a', 'b']);
  });

  it('refuses to create an existing alias with 409 and keeps the first value', async () => {
    await aliases.create('context', 'dup', CTX);
    const e = await failure(aliases.create('context', 'dup', APP));
    expect(e.kind).toBe('conflict');
    expect(e.message).toBe('alias already exists');
    expect(await aliases.lookup('context', 'dup')).toBe(CTX);
  });

  it('lets exactly one of two concurrent creates of an alias win', async () => {
    const results = await Promise.allSettled([aliases.create('context', 'race', CTX), aliases.create('context', 'race', APP)]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    expect(results.filter((r) => r.status === 'rejected')).toHaveLength(1);
  });

  it('deletes idempotently', async () => {
    await aliases.delete('application', 'never-was');
    expect(await aliases.lookup('application', 'never-was')).toBeNull();
  });

  it('stores ids as lowercase hex whatever the input encoding', async () => {
    await aliases.create('context', 'upper', CTX.toUpperCase());
    await aliases.create('application', 'b58', ZERO_B58);
    expect(await aliases.lookup('context', 'upper')).toBe(CTX);
    expect(await aliases.lookup('application', 'b58')).toBe('00'.repeat(32));
  });

  it('refuses ids that are not 32 bytes with 400 naming the scope field', async () => {
    expect((await failure(aliases.create('context', 'a', 'abc'))).message).toMatch(/^Invalid contextId/);
    expect((await failure(aliases.create('application', 'a', 'zz'.repeat(32)))).message).toMatch(/^Invalid applicationId/);
    expect((await failure(aliases.create('device', 'a', ''))).kind).toBe('bad_request');
  });

  it('allows an alias named like an Object.prototype key', async () => {
    await aliases.create('context', '__proto__', CTX);
    const list = await aliases.list('context');
    expect(Object.keys(list)).toEqual(['__proto__']);
    expect(JSON.parse(JSON.stringify(list))).toEqual(JSON.parse(`{"__proto__":"${CTX}"}`));
  });

  it('validates names on every operation', async () => {
    for (const op of [
      () => aliases.create('context', 'bad name', CTX),
      () => aliases.lookup('context', 'bad/name'),
      () => aliases.delete('context', ''),
    ]) {
      expect((await failure(op())).kind).toBe('bad_request');
    }
  });
});

describe('validateAlias', () => {
  it('accepts 1 to 50 characters of [A-Za-z0-9._-]', () => {
    expect(validateAlias('a')).toBe('a');
    expect(validateAlias('My_ctx-1.0')).toBe('My_ctx-1.0');
    expect(validateAlias('x'.repeat(50))).toBe('x'.repeat(50));
  });

  it('says which rule a name breaks', async () => {
    expect((await failure(() => validateAlias(''))).message).toBe('Invalid alias: must not be empty');
    expect((await failure(() => validateAlias('x'.repeat(51)))).message).toMatch(/maximum length of 50 characters \(got 51\)/);
    for (const bad of ['a b', 'a/b', 'é', 'a:b', 'a\u0000']) {
      const e = await failure(() => validateAlias(bad));
      expect(e.kind).toBe('bad_request');
      expect(e.message).toMatch(/only ASCII letters, digits/);
    }
  });
});

describe('parseScope and parseTargetId', () => {
  it('knows context, application and device; identity and others are 404', async () => {
    expect(parseScope('context')).toBe('context');
    expect(parseScope('application')).toBe('application');
    expect(parseScope('device')).toBe('device');
    for (const bad of ['identity', 'Context', 'blob', '']) expect((await failure(() => parseScope(bad))).kind).toBe('not_found');
  });

  it('reads hex in any case and base58 of 32 bytes', () => {
    expect(parseTargetId(CTX.toUpperCase(), 'contextId')).toBe(CTX);
    expect(parseTargetId(ZERO_B58, 'contextId')).toBe('00'.repeat(32));
  });
});

describe('persistence', () => {
  it('reads aliases back through a new service on the same store', async () => {
    await aliases.create('device', 'phone', CTX);
    const again = new AliasService({ store });
    expect(await again.lookup('device', 'phone')).toBe(CTX);
    expect(await again.list('device')).toEqual({ phone: CTX });
  });
});
