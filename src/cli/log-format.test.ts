import { describe, expect, it } from 'vitest';
import { chooseLogFormat, formatLogLine, humanLogDestination } from './log-format.ts';

describe('log lines for people', () => {
  const time = new Date(2026, 0, 2, 14, 2, 11).getTime();

  it('shows time, level, component, message and the other fields', () => {
    const line = JSON.stringify({ level: 30, time, pid: 7, hostname: 'h', component: 'network', msg: 'network: listening', peerId: '12D3', addresses: ['/ip4/127.0.0.1/tcp/2428'] });
    expect(formatLogLine(line)).toBe('14:02:11 INFO  network: listening  peerId=12D3 addresses=["/ip4/127.0.0.1/tcp/2428"]');
    expect(formatLogLine(JSON.stringify({ level: 30, time, component: 'sync', msg: 'caught up' }))).toBe('14:02:11 INFO  sync: caught up');
  });

  it('names the level of a warning and an error, and quotes text with spaces', () => {
    expect(formatLogLine(JSON.stringify({ level: 40, time, msg: 'slow', reason: 'two words' }))).toBe('14:02:11 WARN  slow  reason="two words"');
    expect(formatLogLine(JSON.stringify({ level: 50, time, msg: 'failed', err: { type: 'Error', message: 'boom', stack: 'x' } }))).toBe('14:02:11 ERROR failed  err="boom"');
  });

  it('passes a line that is not a JSON object through', () => {
    expect(formatLogLine('plain text\n')).toBe('plain text');
    expect(formatLogLine('[1,2]')).toBe('[1,2]');
  });

  it('colours the level only when asked', () => {
    expect(formatLogLine(JSON.stringify({ level: 30, time, msg: 'm' }), { colour: true })).toContain('\x1b[32mINFO \x1b[0m');
  });

  it('the destination writes one human line per JSON line', () => {
    const out: string[] = [];
    humanLogDestination({ write: (t) => out.push(t) }).write(`${JSON.stringify({ level: 30, time, msg: 'a' })}\n`);
    expect(out).toEqual(['14:02:11 INFO  a\n']);
  });

  it('human on a terminal, JSON otherwise, the flag wins', () => {
    expect(chooseLogFormat(undefined, true)).toBe('human');
    expect(chooseLogFormat(undefined, false)).toBe('json');
    expect(chooseLogFormat('json', true)).toBe('json');
    expect(chooseLogFormat('human', false)).toBe('human');
  });
});
