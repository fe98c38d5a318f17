import { InvalidArgumentError } from 'commander';
import { describe, expect, it } from 'vitest';
import type { Client } from '../client/index.ts';
import { UsageError } from './exit.ts';
import { DeferredRef, matchPrefix, refArg, resolveAll, type RefContext } from './refs.ts';

const A = `abcdef01${'1'.repeat(56)}`;
const B = `abcdef02${'2'.repeat(56)}`;
const C = `123456${'3'.repeat(58)}`;

describe('refArg', () => {
  it('takes full ids at once, defers prefixes, aliases and @last', () => {
    expect(refArg('group')(A.toUpperCase())).toBe(A);
    const p = refArg('group')('ABCDEF') as unknown as DeferredRef;
    expect(p).toBeInstanceOf(DeferredRef);
    expect(p.text).toBe('abcdef');
    expect((refArg('context')('kv-main') as unknown as DeferredRef).text).toBe('kv-main');
    expect((refArg('namespace')('@last') as unknown as DeferredRef).text).toBe('@last');
    // a full id of a remembered kind is deferred only to be remembered
    expect((refArg('context')(A) as unknown as DeferredRef).text).toBe(A);
  });

  it('refuses short prefixes, aliases where the kind has none, and @last where nothing is remembered', () => {
    expect(() => refArg('group', 'group id')('abc12')).toThrow(/not a group id: expected 64 hex characters .*a unique prefix of at least 6 hex characters/);
    expect(() => refArg('namespace')('team')).toThrow(InvalidArgumentError);
    expect(() => refArg('blob')('@last')).toThrow(InvalidArgumentError);
    expect(() => refArg('context')('has space')).toThrow(/or @last/);
  });
});

describe('matchPrefix', () => {
  const all = [{ id: A, name: 'one' }, { id: B }, { id: C }];
  it('finds the one id a prefix names, or none', () => {
    expect(matchPrefix('context', 'abcdef01', all)).toBe(A);
    expect(matchPrefix('context', '123456', all)).toBe(C);
    expect(matchPrefix('context', 'ffffff', all)).toBeUndefined();
  });
  it('lists the candidates of an ambiguous prefix', () => {
    expect(() => matchPrefix('context', 'abcdef', all)).toThrow(UsageError);
    expect(() => matchPrefix('context', 'abcdef', all)).toThrow(`context prefix abcdef is ambiguous: abcdef0111111111… (one), abcdef0222222222…; type more characters`);
  });
});

describe('resolveAll', () => {
  const client = {
    contexts: { list: async () => [{ id: A }, { id: C }] },
    aliases: { lookup: async (_s: string, name: string) => (name === 'kv-main' ? C : null) },
    namespaces: { list: async () => [{ namespaceId: B, name: 'team' }], groups: async () => [] },
    groups: { contexts: async () => [{ contextId: A }] },
  } as unknown as Client;
  const ctx: RefContext = { client, nodeUrl: 'http://n', profile: 'default', recent: async () => ({ namespace: B }) };

  it('replaces deferred refs in arguments and options, and reports what was used', async () => {
    const args: unknown[] = [refArg('context')('abcdef'), [refArg('context')('kv-main')]];
    const opts: Record<string, unknown> = { group: refArg('namespace')('@last'), other: 'x' };
    const used = await resolveAll(ctx, args, opts);
    expect(args).toEqual([A, [C]]);
    expect(opts).toEqual({ group: B, other: 'x' });
    expect(used).toEqual({ context: C, namespace: B });
  });

  it('says when a prefix names nothing and no alias has that name, and when nothing is remembered', async () => {
    await expect(resolveAll(ctx, [refArg('context', undefined, '<context>')('fedcba')], {})).rejects.toThrow(
      '<context>: no context id starts with fedcba and no context alias of that name on this node (see: hearth context list)',
    );
    await expect(resolveAll(ctx, [refArg('context', undefined, '--context')('@last')], {})).rejects.toThrow(/--context: no context to call @last yet for profile "default" on http:\/\/n/);
    await expect(resolveAll(ctx, [refArg('context')('nope')], {})).rejects.toThrow('no context alias "nope" on this node (see: hearth alias list context)');
  });
});

describe('key ids (issue #34 §3: tables cut them, so prefixes are taken as for every other id)', () => {
  const U1 = '0b6e2c1a-1234-4abc-8def-0123456789ab';
  const U2 = '0b6e2c1a-9999-4abc-8def-0123456789ab';
  const client = {
    auth: {
      listRootKeys: async () => [{ key_id: A, public_key: 'dev' }, { key_id: B, public_key: 'u2' }],
      listClientKeysWithDetails: async () => [{ client_id: U1, name: 'one' }, { client_id: U2, name: 'two' }],
    },
  } as unknown as Client;
  const ctx: RefContext = { client, nodeUrl: 'http://n', profile: 'default', recent: async () => ({}) };

  it('takes whole ids at once and defers prefixes, a UUID prefix with its dashes', () => {
    expect(refArg('clientKey')(U1.toUpperCase())).toBe(U1);
    expect(refArg('rootKey')(A)).toBe(A);
    expect(refArg('key')(U1)).toBe(U1);
    expect(refArg('key')(A)).toBe(A);
    expect((refArg('clientKey')('0B6E2C1A-12') as unknown as DeferredRef).text).toBe('0b6e2c1a-12');
    expect(() => refArg('clientKey', 'client key id')('0b6e')).toThrow(/not a client key id: expected a client key id \(a UUID\), or a unique prefix of at least 6/);
    expect(() => refArg('rootKey')('0b6e2c1a-12')).toThrow(InvalidArgumentError);
  });

  it('resolves root, client and either kind of key prefixes, and lists an ambiguous one', async () => {
    const args: unknown[] = [refArg('rootKey')('abcdef02'), refArg('clientKey')('0b6e2c1a-1234'), refArg('key')('0b6e2c1a-99'), refArg('key')('abcdef01')];
    await resolveAll(ctx, args, {});
    expect(args).toEqual([B, U1, U2, A]);
    await expect(resolveAll(ctx, [refArg('clientKey')('0b6e2c1a')], {})).rejects.toThrow(/client key prefix 0b6e2c1a is ambiguous: 0b6e2c1a-1234-4a… \(one\), 0b6e2c1a-9999-4a… \(two\)/);
    await expect(resolveAll(ctx, [refArg('rootKey', undefined, '<key>')('ffffff')], {})).rejects.toThrow('<key>: no root key id on this node starts with ffffff (see: hearth key list)');
  });
});
