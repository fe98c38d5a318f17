/**
 * Overview: which node this is (its name), is it alive and ready, the hearth version, uptime, peers,
 * contexts and store size, and what it holds. The name, version and uptime are the node's own
 * (`hearth_node_info`, `hearth_build_info`, `process_uptime_seconds` of GET /metrics), not those of
 * its auth component.
 */
import { statusOf } from '../../../../src/client/index.ts';
import { useDashboard } from '../app-context.ts';
import { duration, size } from '../format.ts';
import { total, parseMetrics, type Sample } from '../metrics.ts';
import { Card, ErrorNote, Id, useLoad } from '../ui.tsx';

async function probe(fn: () => Promise<unknown>): Promise<string> {
  try {
    return statusOf(await fn()) ?? 'unknown';
  } catch (err) {
    return statusOf(err) ?? 'unreachable';
  }
}

export function Overview() {
  const { client } = useDashboard();
  const node = useLoad(async (signal) => {
    const opts = { signal };
    const [health, ready, service, auth, peers, identity, metrics] = await Promise.all([
      probe(() => client.admin.health(opts)),
      probe(() => client.admin.ready(opts)),
      client.auth.identity(opts),
      client.auth.health(opts),
      client.admin.peers(opts),
      client.accounts.identity(opts),
      client.admin.metrics(opts).then(parseMetrics),
    ]);
    const label = (name: string, key: string): string | undefined => metrics.find((m: Sample) => m.name === name)?.labels[key];
    const uptime = metrics.find((m: Sample) => m.name === 'process_uptime_seconds')?.value;
    return {
      health,
      ready,
      service,
      peers,
      identity,
      name: label('hearth_node_info', 'name'),
      version: label('hearth_build_info', 'version') ?? service.version,
      uptime: uptime ?? auth.uptime_seconds,
      storeBytes: total(metrics, 'hearth_store_bytes'),
    };
  });
  const counts = useLoad(async (signal) => {
    const [apps, contexts, namespaces, blobs] = await Promise.all([
      client.applications.list({ signal }),
      client.contexts.list({ signal }),
      client.namespaces.list({ signal }),
      client.blobs.list({ signal }),
    ]);
    return { apps: apps.length, contexts: contexts.length, namespaces: namespaces.length, blobs: blobs.length };
  });
  const n = node.data;
  const ok = n?.health === 'alive' && n.ready === 'ready';
  return (
    <div class="page">
      <h1>Overview</h1>
      <ErrorNote error={node.error ?? counts.error} />
      <div class="tiles">
        <div class="tile" data-testid="node-name">
          <span class="label">Node</span>
          <strong title={location.host}>{n ? (n.name ?? location.host) : '…'}</strong>
          <small class="muted">{location.host}</small>
        </div>
        <div class={`tile ${n ? (ok ? 'good' : 'bad') : ''}`} data-testid="health">
          <span class="label">Health</span>
          <strong>{n ? `${n.health}, ${n.ready}` : '…'}</strong>
        </div>
        <div class="tile" data-testid="version">
          <span class="label">Version</span>
          <strong>{n ? `hearth ${n.version}` : '…'}</strong>
        </div>
        <div class="tile" data-testid="peers">
          <span class="label">Peers</span>
          <strong>{n ? n.peers.count : '…'}</strong>
        </div>
        <div class="tile" data-testid="uptime">
          <span class="label">Uptime</span>
          <strong>{n ? duration(n.uptime) : '…'}</strong>
        </div>
        <div class="tile" data-testid="contexts">
          <span class="label">Contexts</span>
          <strong>{counts.data?.contexts ?? '…'}</strong>
        </div>
        <div class="tile" data-testid="store-size">
          <span class="label">Store size</span>
          <strong>{n ? size(n.storeBytes) : '…'}</strong>
        </div>
      </div>
      <Card title="What this node holds" actions={<button type="button" onClick={counts.reload}>Refresh</button>}>
        <dl class="facts">
          <dt>Applications</dt>
          <dd data-testid="count-apps">{counts.data?.apps ?? '…'}</dd>
          <dt>Contexts</dt>
          <dd data-testid="count-contexts">{counts.data?.contexts ?? '…'}</dd>
          <dt>Namespaces</dt>
          <dd>{counts.data?.namespaces ?? '…'}</dd>
          <dt>Blobs</dt>
          <dd>{counts.data?.blobs ?? '…'}</dd>
        </dl>
      </Card>
      {n ? (
        <Card title="Identity">
          <dl class="facts">
            <dt>Account</dt>
            <dd>
              <Id value={n.identity.accountId} keep={16} />
            </dd>
            <dt>Device</dt>
            <dd>
              <Id value={n.identity.deviceId} keep={16} />
            </dd>
            <dt>Public key</dt>
            <dd>
              <Id value={n.identity.publicKey} keep={16} />
            </dd>
            <dt>Auth</dt>
            <dd>
              {n.service.authentication_mode} ({n.service.providers.join(', ')})
            </dd>
          </dl>
        </Card>
      ) : null}
    </div>
  );
}
