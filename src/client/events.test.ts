import { expect, it } from 'vitest';
import { decodeJsonBytes, SseParser } from './events.ts';

it('decodes SSE frames split anywhere, with ids, comments and CRLF line ends', () => {
  const p = new SseParser();
  const wire = 'event:message\nid:7-0\nretry:3000\ndata:{"type":"connect"}\n\n:\n\nevent:message\r\nid:7-1\r\ndata: {"result":1}\r\n\r\ndata:a\ndata:b\n\n';
  const out = [];
  for (let i = 0; i < wire.length; i += 5) out.push(...p.push(wire.slice(i, i + 5)));
  expect(out).toEqual([
    { id: '7-0', data: '{"type":"connect"}' },
    { id: '7-1', data: '{"result":1}' },
    { data: 'a\nb' },
  ]);
});

it('decodes byte arrays of JSON as the node sends them in event data', () => {
  expect(decodeJsonBytes(Array.from(new TextEncoder().encode('{"k":"é"}')))).toEqual({ k: 'é' });
});
