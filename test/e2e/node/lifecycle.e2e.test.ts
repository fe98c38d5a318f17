/**
 * Node stop: a connection that never sends a request (browsers and fetch open spare sockets) must
 * not hold the drain until the server's header timeout.
 */
import { connect } from 'node:net';
import { expect, it } from 'vitest';
import { startTestNode } from '../../helpers/node.ts';

it('stops within the drain deadline although a client holds a silent connection', async () => {
  const node = await startTestNode();
  const { hostname, port } = new URL(node.url);
  const socket = connect(Number(port), hostname);
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.on('error', () => undefined);
  const started = Date.now();
  await node.destroy();
  await closed;
  // the server's own header timeout is 60 s; the node's drain deadline is 5 s
  expect(Date.now() - started).toBeLessThan(20_000);
}, 30_000);
