import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NatLab, natLabNodes } from '../test/helpers/nat-lab.ts';
const topo = (process.argv[2] ?? 'forwarded') as 'forwarded';
const lab = new NatLab('dbg', topo);
console.log('setup', await lab.setUp());
const home = await mkdtemp(join(tmpdir(), 'hearth-dbg-'));
const { r, a, b } = await natLabNodes(lab, home, (_n, cfg) => { cfg.network.dht = false; });
try {
  await r.start(); await Promise.all([a.start(), b.start()]);
  for (let i = 0; i < 3; i++) {
    await new Promise((res) => setTimeout(res, 5000));
    for (const n of [r, a, b]) {
      const s = (await n.client.admin.networkStatus()) as any;
      console.log(n.name, JSON.stringify({ autonat: s.autonat, ext: s.externalAddrs, relays: s.relays?.length, pen: s.penalties, banned: s.banned, conns: s.connections.map((c: any) => c.remoteAddr) }));
    }
  }
  for (const n of [a, r]) console.log(n.name, '=====\n', n.process?.output().split('\n').filter((l) => !/GET \/admin-api\/network|incoming request|request completed/.test(l)).slice(-40).join('\n'));
} finally {
  await Promise.allSettled([r, a, b].map((n) => n.stop()));
  await lab.tearDown();
}
