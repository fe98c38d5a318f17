import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InvalidArgumentError } from 'commander';
import { describe, expect, it } from 'vitest';
import { RpcError, stringifyJson, type StreamFrame } from '../client/index.ts';
import { readableRpcError } from './call.ts';
import { humanValue, parseCount, parseIdArg, parseRefArg, readJsonArg } from './context-args.ts';
import { UsageError } from './exit.ts';
import { frameLine } from './events.ts';

const HEX = 'ab'.repeat(32);
// base58 of 32 bytes of 0xab (as older clients send ids)
const B58 = 'CZ8YUVdk7znjrUmnb5n7kgySk9yRAsQDYmyCxzfSky9t';

describe('id and alias arguments', () => {
  it('takes 64 hex in any case and base58 of 32 bytes, answering lowercase hex', () => {
    expect(parseIdArg(HEX.toUpperCase())).toBe(HEX);
    expect(parseIdArg(B58)).toBe(HEX);
    expect(() => parseIdArg('abc')).toThrow(InvalidArgumentError);
    expect(() => parseIdArg('ab'.repeat(33))).toThrow(/64 hex characters/);
  });

  it('reads anything else in alias syntax as an alias, and refuses the rest', () => {
    expect(parseRefArg(HEX)).toEqual({ id: HEX });
    expect(parseRefArg('kv-main.v2')).toEqual({ alias: 'kv-main.v2' });
    expect(() => parseRefArg('has space')).toThrow(InvalidArgumentError);
    expect(() => parseRefArg('x'.repeat(51))).toThrow(/or an alias/);
  });

  it('counts are positive whole numbers', () => {
    expect(parseCount('3')).toBe(3);
    for (const bad of ['0', '-1', '1.5', 'many']) expect(() => parseCount(bad)).toThrow(InvalidArgumentError);
  });
});

describe('readJsonArg', () => {
  it('keeps integers beyond 2^53 exact from a flag value and from @file', async () => {
    const text = '{"n":18446744073709551615,"s":"x"}';
    const inline = await readJsonArg(text, '--args', {});
    expect(stringifyJson(inline)).toBe(text);
    const dir = await mkdtemp(join(tmpdir(), 'hearth-args-'));
    try {
      await writeFile(join(dir, 'a.json'), text);
      expect(stringifyJson(await readJsonArg(`@${join(dir, 'a.json')}`, '--args', {}))).toBe(text);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('answers the fallback when absent, and a usage error naming the flag otherwise', async () => {
    expect(await readJsonArg(undefined, '--args', { d: 1 })).toEqual({ d: 1 });
    const bad = await readJsonArg('{oops', '--params', {}).catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(UsageError);
    expect((bad as Error).message).toMatch(/^--params from the argument is not valid JSON: .+$/);
    await expect(readJsonArg('  ', '--args', {})).rejects.toThrow(/--args: empty/);
    await expect(readJsonArg('@/nonexistent/x.json', '--args', {})).rejects.toThrow(/--args: cannot read file \/nonexistent\/x.json: no such file or directory/);
  });
});

describe('output helpers', () => {
  it('shows a method result for people', () => {
    expect(humanValue(null, 'set')).toBe('set: no return value');
    expect(humanValue('hello', 'get')).toBe('hello');
    expect(humanValue({ n: 18446744073709551615n }, 'get')).toBe('{"n":18446744073709551615}');
  });

  it('decodes an application error payload given as bytes, and leaves other errors alone', () => {
    const bytes = [...Buffer.from('{"kind":"NotFound"}')].join(', ');
    const err = readableRpcError(new RpcError('FunctionCallError', `the method call returned an error: [${bytes}]`));
    expect(err.message).toBe('FunctionCallError: the method call returned an error: {"kind":"NotFound"}');
    const binary = new RpcError('FunctionCallError', 'the method call returned an error: [255, 254]');
    expect(readableRpcError(binary)).toBe(binary);
    const plain = new RpcError('ContextNotFound', 'no such context');
    expect(readableRpcError(plain)).toBe(plain);
  });

  it('renders one line per frame, ids short (full with --wide), contexts by alias, event payloads as text', () => {
    const at = new Date('2026-01-02T03:04:05.000Z');
    const mutation: StreamFrame = {
      contextId: HEX,
      type: 'StateMutation',
      data: { newRoot: 'cd'.repeat(32), events: [{ kind: 'Inserted', data: [...Buffer.from('{"key":"k"}')], handler: null }, { kind: 'Cleared', data: [], handler: null }] },
    };
    const wide = { wide: true };
    expect(frameLine(mutation, at, wide)).toBe(`2026-01-02T03:04:05.000Z  context ${HEX}  StateMutation  root ${'cd'.repeat(32)}  Inserted {"key":"k"}  Cleared`);
    const group: StreamFrame = { groupId: HEX, type: 'MemberAdded', data: { memberAccount: 'ef'.repeat(32), role: 'Member' } };
    expect(frameLine(group, at, wide)).toBe(`2026-01-02T03:04:05.000Z  group ${HEX}  MemberAdded  {"memberAccount":"${'ef'.repeat(32)}","role":"Member"}`);
    const presence: StreamFrame = { contextId: HEX, type: 'Ephemeral', data: { author: 'ef'.repeat(32), state: [0xff, 0x00] } };
    expect(frameLine(presence, at, wide)).toBe(`2026-01-02T03:04:05.000Z  context ${HEX}  Ephemeral  author ${'ef'.repeat(32)} 0xff00`);
    // by default (issue #34 §3): a context by its alias, every other id cut to 12 characters
    expect(frameLine(mutation, at, { aliases: new Map([[HEX, 'kv-main']]) })).toBe(`2026-01-02T03:04:05.000Z  context kv-main  StateMutation  root ${'cd'.repeat(6)}…  Inserted {"key":"k"}  Cleared`);
    expect(frameLine(group, at)).toBe(`2026-01-02T03:04:05.000Z  group ${HEX.slice(0, 12)}…  MemberAdded  {"memberAccount":"${'ef'.repeat(6)}…","role":"Member"}`);
    expect(frameLine(presence, at)).toBe(`2026-01-02T03:04:05.000Z  context ${HEX.slice(0, 12)}…  Ephemeral  author ${'ef'.repeat(6)}… 0xff00`);
  });
});
