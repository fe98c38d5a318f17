/**
 * The write path's gossip (service.ts `publishLocal`): a delta is sealed, signed and published only
 * when some peer is on the context's topic; a lone node's write still names the group's key.
 */
import { afterEach, expect, it } from 'vitest';
import { APP_ID } from '../contexts/testkit.ts';
import { contextTopic } from '../network/topic-names.ts';
import { MemoryHub } from '../network/memory.ts';
import { syncNode, until, type SyncNode } from './testkit.ts';

const running: SyncNode[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((n) => n.stop().catch(() => undefined)));
});

it('publishes a delta only to a topic with peers, and names the group key on the first write either way', async () => {
  const hub = new MemoryHub();
  const a = await syncNode(hub, 1_700_000_000_000);
  running.push(a);
  const published: string[] = [];
  const publish = a.net.publish.bind(a.net);
  a.net.publish = (topic, data) => (published.push(topic), publish(topic, data));
  const ns = await a.namespaces.found({ applicationId: APP_ID });
  const { contextId } = await a.contexts.create({ groupId: ns.id, applicationId: APP_ID, initializationParams: new Uint8Array() });
  const set = (value: string) =>
    a.executor.call(contextId, { method: 'set', input: new TextEncoder().encode(JSON.stringify({ key: 'k', value })), executorId: a.identity.accountId, deviceId: a.identity.publicKey, readOnly: false }, () => undefined);
  await set('1');
  await until('the group has a key', () => a.governance.namespace(ns.id)?.groups[ns.id]?.keyId !== undefined);
  await new Promise((r) => setTimeout(r, 50));
  expect(published.filter((t) => t === contextTopic(contextId))).toEqual([]);

  // a peer on the topic: the next write goes out on it
  const peer = hub.join('ee'.repeat(32));
  hub.link(peer.self, a.identity.publicKey);
  const heard: Uint8Array[] = [];
  peer.subscribe(contextTopic(contextId), (m) => void heard.push(m.data));
  await until('A sees the peer on the topic', () => a.net.topicPeers(contextTopic(contextId)).includes(peer.self));
  await set('2');
  await until('the delta was gossiped', () => heard.some((d) => JSON.parse(new TextDecoder().decode(d)).type === 'delta'));
});
