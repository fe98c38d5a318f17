/**
 * Network: this node's peer id and dialable addresses (what another node bootstraps from), the
 * connected peers, the gossip topics it follows with what each carries, the traffic counters,
 * penalties and bans — `GET /admin-api/network/status` (docs/network.md "Status and metrics"),
 * read again every few seconds while the page is open. A standalone node says so instead.
 */
import { useEffect } from 'preact/hooks';
import { useDashboard } from '../app-context.ts';
import { pretty, short, size } from '../format.ts';
import { banActive, classifyTopic, networkSummary, reachabilityMeaning, readNetworkStatus, type Ban, type Connection, type NetworkView } from '../network-status.ts';
import { BASE, navigate } from '../router.ts';
import { useNames, type Names } from '../names.ts';
import { ago } from '../sync-status.ts';
import { Card, ErrorNote, Id, Table, useLoad } from '../ui.tsx';

/** how often the page reads the status again (as the metrics page and the sync panel) */
const REFRESH_MS = 3_000;

function Since({ iso }: { iso: string }) {
  if (!iso) return <span class="muted">–</span>;
  return (
    <time dateTime={iso} title={new Date(iso).toLocaleString()}>
      {ago(iso)}
    </time>
  );
}

function ThisNode({ view }: { view: NetworkView }) {
  return (
    <Card title="This node">
      <dl class="facts">
        <dt>Peer id</dt>
        <dd data-testid="local-peer-id">
          <Id value={view.localPeerId} keep={80} />
        </dd>
        {view.standalone ? null : (
          <>
            <dt>Dialable at</dt>
            <dd>
              {view.externalAddrs.length ? (
                <ul class="plain addrs" aria-label="dialable addresses">
                  {view.externalAddrs.map((a) => (
                    <li>
                      <Id value={a} keep={200} />
                    </li>
                  ))}
                </ul>
              ) : (
                <span class="muted" data-testid="no-addresses">
                  no dialable address yet
                </span>
              )}
              <p class="muted">
                Another node connects to this one with one of these: in its <code>config.toml</code> under <code>[bootstrap] nodes</code>, or{' '}
                <code>hearth init --boot-nodes &lt;address&gt;</code>.
              </p>
            </dd>
            <dt>Reachable from outside</dt>
            <dd data-testid="reachability">{reachabilityMeaning(view)}</dd>
            <dt>Listening on</dt>
            <dd>{view.listenAddrs.length ? view.listenAddrs.map((a) => <code class="addr">{a} </code>) : <span class="muted">–</span>}</dd>
          </>
        )}
      </dl>
    </Card>
  );
}

function Peers({ connections }: { connections: Connection[] }) {
  return (
    <Card title="Connected peers">
      <Table
        label="connected peers"
        rows={connections}
        rowKey={(c) => `${c.peerId}|${c.remoteAddr}|${c.openedAt}`}
        empty="No peer is connected."
        columns={[
          {
            header: 'Peer',
            cell: (c) => (
              <code title={`${c.peerKey}\n${c.peerId}`} data-peer-key={c.peerKey} data-peer-id={c.peerId}>
                {short(c.peerKey || c.peerId, 12)}
              </code>
            ),
          },
          { header: 'Address', cell: (c) => <code class="addr">{c.remoteAddr || '–'}</code> },
          { header: 'Direction', cell: (c) => c.direction || '–' },
          { header: 'Connected', cell: (c) => <Since iso={c.openedAt} /> },
        ]}
      />
    </Card>
  );
}

function Topics({ view, contexts, namespaces, names }: { view: NetworkView; contexts: Set<string>; namespaces: Map<string, string | undefined>; names: Names }) {
  return (
    <Card title="Topics">
      <Table
        label="topics"
        rows={view.topics}
        rowKey={(t) => t.topic}
        empty="This node follows no topic: it holds no context or namespace that replicates."
        columns={[
          {
            header: 'Topic',
            cell: (t) => (
              <code title={t.topic} data-topic={t.topic}>
                {short(t.topic, 16)}
              </code>
            ),
          },
          {
            header: 'Carries',
            cell: (t) => {
              const info = classifyTopic(t.topic);
              if (info.kind === 'context' && info.id && contexts.has(info.id)) {
                const page = `contexts?context=${info.id}`;
                return (
                  <a
                    href={`${BASE}/${page}`}
                    onClick={(e) => {
                      if (e.ctrlKey || e.metaKey || e.shiftKey || e.button !== 0) return;
                      e.preventDefault();
                      navigate(page);
                    }}
                  >
                    {info.description}
                    {names.get(info.id) ? ` (${names.get(info.id)})` : ''}
                  </a>
                );
              }
              const name = info.kind === 'namespace' && info.id ? namespaces.get(info.id) : undefined;
              return (
                <span data-kind={info.kind}>
                  {info.description}
                  {name ? ` (${name})` : ''}
                </span>
              );
            },
          },
          { header: 'Peers', cell: (t) => t.peers, class: 'num' },
        ]}
      />
    </Card>
  );
}

function Traffic({ view }: { view: NetworkView }) {
  const { bytes, gossip, requests } = view;
  return (
    <Card title="Traffic since start">
      <dl class="facts" data-testid="traffic">
        <dt>Bytes</dt>
        <dd>
          {size(bytes.in)} in, {size(bytes.out)} out
        </dd>
        <dt>Gossip messages</dt>
        <dd>
          {gossip.in} in, {gossip.out} out, {gossip.dropped} dropped
        </dd>
        <dt>Requests</dt>
        <dd>
          {requests.in} in, {requests.out} out, {requests.refused} refused
        </dd>
      </dl>
    </Card>
  );
}

function Penalties({ view }: { view: NetworkView }) {
  return (
    <Card title="Penalties and bans">
      <p class="muted">Peers that send malformed or oversized input are penalized; enough penalties ban the peer for a while.</p>
      {view.penalties.length ? (
        <ul class="plain" aria-label="penalties">
          {view.penalties.map((p) => (
            <li data-reason={p.reason}>
              <code>{p.reason}</code> {p.count}
            </li>
          ))}
        </ul>
      ) : (
        <p data-testid="no-penalties">No penalty given.</p>
      )}
      <Table<Ban>
        label="banned peers"
        rows={view.banned}
        rowKey={(b) => b.peerKey}
        empty="No peer is banned."
        columns={[
          { header: 'Peer', cell: (b) => <Id value={b.peerKey} keep={12} /> },
          { header: 'Until', cell: (b) => (b.until ? `${new Date(b.until).toLocaleString()}${banActive(b) ? '' : ' (ended)'}` : '–') },
        ]}
      />
    </Card>
  );
}

export function Network() {
  const { client } = useDashboard();
  const status = useLoad(async (signal) => readNetworkStatus(await client.admin.networkStatus({ signal })));
  const { reload } = status;
  useEffect(() => {
    const timer = setInterval(reload, REFRESH_MS);
    return () => clearInterval(timer);
  }, [reload]);
  // what the node holds, to name and link the topics (read once: a new context shows on the next visit)
  const held = useLoad(async (signal) => {
    const [contexts, namespaces] = await Promise.all([client.contexts.list({ signal }), client.namespaces.list({ signal })]);
    return { contexts: new Set(contexts.map((c) => c.id.toLowerCase())), namespaces: new Map(namespaces.map((n) => [n.namespaceId.toLowerCase(), n.name])) };
  });
  const names = useNames();
  const view = status.data;
  return (
    <div class="page">
      <h1>Network</h1>
      <ErrorNote error={status.error ?? held.error} />
      {view ? (
        <p class={view.standalone ? 'alert note' : undefined} data-testid="network-summary">
          {networkSummary(view)}
        </p>
      ) : status.loading ? (
        <p class="muted">Loading…</p>
      ) : null}
      {view ? <ThisNode view={view} /> : null}
      {view && !view.standalone ? (
        <>
          <Peers connections={view.connections} />
          <Topics view={view} contexts={held.data?.contexts ?? new Set()} namespaces={held.data?.namespaces ?? new Map()} names={names} />
          <Traffic view={view} />
          <Penalties view={view} />
          {view.replication ? (
            <Card title="Governance replication">
              <details>
                <summary>counters</summary>
                <pre class="result">{pretty(view.replication)}</pre>
              </details>
            </Card>
          ) : null}
        </>
      ) : null}
    </div>
  );
}
