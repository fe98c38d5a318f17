import { expect, it } from 'vitest';
import { encodeSseFrame, parseFrameId } from './sse-format.ts';

it('writes event, id, retry and one data line with no space after the colon', () => {
  expect(encodeSseFrame({ id: '7-0', retry: 3000, data: '{"a":1}' })).toBe('event:message\nid:7-0\nretry:3000\ndata:{"a":1}\n\n');
  expect(encodeSseFrame({ data: 'x' })).toBe('event:message\ndata:x\n\n');
});

it('refuses newlines that would split or forge a frame', () => {
  expect(() => encodeSseFrame({ id: '1\n2', data: 'x' })).toThrow();
  expect(() => encodeSseFrame({ data: 'a\nid:9' })).toThrow();
  expect(() => encodeSseFrame({ data: 'a\rb' })).toThrow();
});

it('parses `<session>-<n>` ids and nothing else', () => {
  expect(parseFrameId('123-45')).toEqual({ sessionId: '123', n: 45 });
  expect(parseFrameId(' 9-0 ')).toEqual({ sessionId: '9', n: 0 });
  for (const bad of [undefined, '', '123', 'a-1', '1-x', '-1', '1-2-3']) expect(parseFrameId(bad)).toBeNull();
});

it('encodes a frame for the socket as the stream path would, once per event for its shared part', async () => {
  const { frameBytes, frameTail, rawBytes } = await import('./sse-format.ts');
  const tail = frameTail('{"result":{"a":"é"}}');
  expect(frameTail('{"result":{"a":"é"}}')).toBe(tail); // the same event again: the same buffer
  const plain = frameBytes('12-3', tail, false);
  expect(plain.toString()).toBe(encodeSseFrame({ id: '12-3', data: '{"result":{"a":"é"}}' }));
  const chunked = frameBytes('12-3', tail, true);
  expect(chunked.toString()).toBe(`${plain.length.toString(16)}\r\n${plain.toString()}\r\n`);
  expect(rawBytes(':\n\n', true).toString()).toBe('3\r\n:\n\n\r\n');
  expect(rawBytes(':\n\n', false).toString()).toBe(':\n\n');
  expect(() => frameTail('a\nid:9')).toThrow();
});
