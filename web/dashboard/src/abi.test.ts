import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { argumentTemplate, defaultMethod, entriesMethod, isDestructive, placeholder, writeQuestion, type AbiDoc } from './abi.ts';

const kv = JSON.parse(readFileSync(new URL('../../../test/apps/kv.abi.json', import.meta.url), 'utf8')) as AbiDoc;
const methods = kv.methods!;
const m = (name: string) => methods.find((x) => x.name === name)!;

describe('the ABI as the dashboard reads it', () => {
  it('starts the call form on a read method, never on init or a destructive one', () => {
    expect(defaultMethod(methods)).toBe('get');
    expect(defaultMethod([m('init'), m('clear'), m('set')])).toBe('set');
    expect(defaultMethod([m('clear'), m('remove')])).toBe(''); // nothing else to offer: the person chooses
    expect(defaultMethod([])).toBe('');
  });

  it('knows which writes destroy state and words the confirmation by it', () => {
    expect(isDestructive(m('clear'))).toBe(true);
    expect(isDestructive(m('remove'))).toBe(true);
    expect(isDestructive(m('set'))).toBe(false);
    expect(isDestructive(m('get'))).toBe(false);
    expect(writeQuestion(m('clear'), 'notes')).toMatch(/^clear may delete state of notes/);
    expect(writeQuestion(m('set'), 'notes')).toMatch(/^set changes the state of notes/);
  });

  it('fills an argument template from the parameters and their types', () => {
    expect(JSON.parse(argumentTemplate(m('set')))).toEqual({ key: '', value: '' });
    expect(argumentTemplate(m('len'))).toBe('{}');
    const types = { Point: { kind: 'record', fields: [{ name: 'x', type: { kind: 'u64' } }, { name: 'tag', type: { kind: 'string' }, nullable: true }] } };
    expect(placeholder({ $ref: 'Point' }, types)).toEqual({ x: 0, tag: null });
    expect(placeholder({ kind: 'list', items: { kind: 'u8' } })).toEqual([]);
    expect(placeholder({ kind: 'bytes', size: 2 })).toBe('0000');
    expect(placeholder({ kind: 'variant', variants: [{ name: 'On' }] })).toBe('On');
    expect(placeholder({ $ref: 'Missing' }, types)).toBeNull();
  });

  it('finds the view method that lists the entries', () => {
    expect(entriesMethod(methods)?.name).toBe('entries');
    expect(entriesMethod(methods.filter((x) => x.name !== 'entries'))).toBeUndefined(); // len returns a number, get takes a key
    expect(entriesMethod([{ name: 'all_items', params: [], returns: { $ref: 'L' }, intent: 'read_only' }], { L: { kind: 'list' } })?.name).toBe('all_items');
  });
});

describe('the state browser rows', async () => {
  const { entryRows } = await import('./state-entries.ts');
  it('reads a map, a list and pairs as key, size and preview (text, hex or JSON)', () => {
    expect(entryRows({ greeting: 'héllo' })).toEqual([{ key: 'greeting', size: 6, preview: 'héllo', as: 'text' }]);
    expect(entryRows(['a', [0, 255, 1]])).toEqual([
      { key: '0', size: 1, preview: 'a', as: 'text' },
      { key: '1', size: 3, preview: '00 ff 01', as: 'hex' },
    ]);
    expect(entryRows([['k', { n: 1 }]])).toEqual([{ key: 'k', size: 7, preview: '{ "n": 1 }', as: 'json' }]);
    expect(entryRows(null)).toEqual([]);
    expect(entryRows('x'.repeat(200))[0]!.preview).toHaveLength(121);
  });
});
