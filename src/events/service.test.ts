import { PassThrough, Writable } from 'node:stream';
import { afterEach, expect, it } from 'vitest';
import { bindingOf } from '../auth/binding.ts';
import type { Principal } from '../auth/service.ts';
import { EventBus } from '../bus.ts';
import { PresenceService } from './presence.ts';
import { EventStreamService } from './service.ts';

const CTX = 'aa'.repeat(32);
const principal = (keyId = 'k'): Principal => ({ keyId, keyType: 'root', rootKeyId: keyId, permissions: ['admin'], binding: bindingOf(['admin']) });

let svc: EventStreamService | undefined;
afterEach(() => svc?.stop());

function setup(limits: { heartbeatMs?: number } = {}) {
  const bus = new EventBus();
  const clock = { now: () => 1000 };
  const drops: string[] = [];
  svc = new EventStreamService({
    bus,
    clock,
    presence: new PresenceService({ bus, clock }),
    observe: { groupKnown: () => true },
    limits: { replayFrames: 8, queueFrames: 4, ...limits },
    onDrop: (d) => drops.push(d.reason),
  });
  svc.start();
  const publish = (i: number) => bus.publish({ type: 'context', contextId: CTX, kind: 'StateMutation', data: { i } });
  return { svc, publish, drops };
}

/** Frames written to a stream so far, as {id?, data} objects. */
function framesOf(text: string) {
  return text
    .split('\n\n')
    .filter((f) => f.startsWith('event:message'))
    .map((f) => {
      const id = /^id:(.*)$/m.exec(f)?.[1];
      const data = JSON.parse(/^data:(.*)$/m.exec(f)![1]);
      return id === undefined ? { data } : { id, data };
    });
}

function sink() {
  const s = new PassThrough();
  let text = '';
  s.on('data', (c) => (text += c));
  return { stream: s, text: () => text };
}

it('opens a session with a connect frame, then numbers its frames from 1', async () => {
  const { svc, publish } = setup();
  const o = svc.openSse(principal(), undefined);
  const out = sink();
  o.session.attach(out.stream, o.head, o.sentUpTo);
  await svc.subscription(principal(), { id: o.session.id, method: 'subscribe', params: { contexts: [CTX], groups: [] } });
  publish(1);
  publish(2);
  await new Promise((r) => setImmediate(r));
  const frames = framesOf(out.text());
  expect(frames[0]).toEqual({ id: `${o.session.id}-0`, data: { type: 'connect', session_id: o.session.id, reconnect: false } });
  expect(frames.slice(1).map((f) => [f.id, f.data.result.data.i])).toEqual([
    [`${o.session.id}-1`, 1],
    [`${o.session.id}-2`, 2],
  ]);
});

it('resumes after Last-Event-ID in order without duplicates, replacing the old connection', async () => {
  const { svc, publish } = setup();
  const o = svc.openSse(principal(), undefined);
  const first = sink();
  o.session.attach(first.stream, o.head, o.sentUpTo);
  await svc.subscription(principal(), { id: o.session.id, method: 'subscribe', params: { contexts: [CTX], groups: [] } });
  for (let i = 1; i <= 5; i++) publish(i);
  const r = svc.openSse(principal(), `${o.session.id}-2`);
  expect(r.reconnect).toBe(true);
  const second = sink();
  r.session.attach(second.stream, r.head, r.sentUpTo);
  publish(6);
  await new Promise((res) => setImmediate(res));
  const frames = framesOf(second.text());
  expect(frames[0]).toEqual({ id: `${o.session.id}-2`, data: { type: 'connect', session_id: o.session.id, reconnect: true } });
  expect(frames.slice(1).map((f) => f.data.result.data.i)).toEqual([3, 4, 5, 6]);
  expect(framesOf(first.text()).at(-1)).toEqual({ data: { type: 'close', reason: 'replaced: another connection resumed this session' } });
});

it('sends a gap frame when the buffer no longer covers the resume point', async () => {
  const { svc, publish } = setup();
  const o = svc.openSse(principal(), undefined);
  await svc.subscription(principal(), { id: o.session.id, method: 'subscribe', params: { contexts: [CTX], groups: [] } });
  for (let i = 1; i <= 20; i++) publish(i); // buffer keeps 13..20
  const r = svc.openSse(principal(), `${o.session.id}-3`);
  const out = sink();
  r.session.attach(out.stream, r.head, r.sentUpTo);
  await new Promise((res) => setImmediate(res));
  const frames = framesOf(out.text());
  expect(frames[1]).toEqual({ data: { type: 'gap', reason: 'buffer_exceeded', lastEventId: `${o.session.id}-3`, resumedAfter: `${o.session.id}-12`, missed: 9 } });
  expect(frames.slice(2).map((f) => f.data.result.data.i)).toEqual([13, 14, 15, 16, 17, 18, 19, 20]);
});

it('gives another key, or an unknown session, a fresh session and a session_unknown gap', () => {
  const { svc } = setup();
  const o = svc.openSse(principal('alice'), undefined);
  const r = svc.openSse(principal('mallory'), `${o.session.id}-0`);
  expect(r.session.id).not.toBe(o.session.id);
  expect(r.reconnect).toBe(false);
  expect(r.head[1]).toContain('"reason":"session_unknown"');
  expect(() => svc.sessionInfo(principal('mallory'), o.session.id)).toThrow(/not the session owner/);
});

it('drops a connection that falls more than queueFrames behind, keeping the session for a resume', async () => {
  const { svc, publish, drops } = setup();
  const o = svc.openSse(principal(), undefined);
  await svc.subscription(principal(), { id: o.session.id, method: 'subscribe', params: { contexts: [CTX], groups: [] } });
  const stuck = new Writable({ highWaterMark: 1, write: () => undefined }); // never acknowledges a write
  o.session.attach(stuck, o.head, o.sentUpTo);
  for (let i = 1; i <= 6; i++) publish(i);
  expect(drops).toEqual([expect.stringContaining('slow consumer')]);
  expect(svc.sessionInfo(principal(), o.session.id)).toMatchObject({ status: 'persisted', event_counter: 6 });
  stuck.destroy();
});

it('sends a heartbeat comment when the stream is idle', async () => {
  const { svc } = setup({ heartbeatMs: 20 });
  const o = svc.openSse(principal(), undefined);
  const out = sink();
  o.session.attach(out.stream, o.head, o.sentUpTo);
  await new Promise((r) => setTimeout(r, 70));
  expect(out.text()).toMatch(/\n\n:\n\n/);
  o.session.disconnect('done');
});
