/**
 * A context's sync status on the contexts page (issue #13 item 5; docs/dashboard.md): a column of
 * the list (caught up / behind N / waiting for peers / no peers …) and a panel with the state, the
 * reasons, the peers last heard from and the last sync, refreshed while it is open. The status comes
 * from hearth's own routes (`GET /contexts/sync` for the list, `GET /contexts/{id}/sync` for the
 * panel), never from the spec-shaped Context. Both show nothing for a context without a status (a
 * node without a network answers those routes 503).
 */
import { useEffect } from 'preact/hooks';
import type { ContextSyncStatus } from '../../../../src/client/index.ts';
import { useDashboard } from '../app-context.ts';
import { ago, stateWords, syncSummary } from '../sync-status.ts';
import { ErrorNote, Id, useAction, useLoad } from '../ui.tsx';
import type { ContextColumn, ContextPanel, ContextRow, PanelProps } from './context-panel.ts';

/** how often the open panel reads the status again */
const REFRESH_MS = 3_000;

const hasSync = (row: ContextRow) => row.sync !== undefined;

function SyncBadge({ sync }: { sync: ContextSyncStatus | undefined }) {
  const summary = syncSummary(sync);
  if (!summary) return null;
  return (
    <span class={`badge ${summary.tone}`} title={summary.explanation} data-testid="sync-badge">
      {summary.label}
    </span>
  );
}

function At({ iso }: { iso: string | null }) {
  if (!iso) return <span class="muted">never</span>;
  return <time dateTime={iso} title={new Date(iso).toLocaleString()}>{ago(iso)}</time>;
}

function SyncPanel({ row }: PanelProps) {
  const { client } = useDashboard();
  const id = row.context.id;
  const fresh = useLoad((signal) => client.contexts.syncStatus(id, { signal }), [id]);
  const { reload } = fresh;
  useEffect(() => {
    const timer = setInterval(reload, REFRESH_MS);
    return () => clearInterval(timer);
  }, [reload]);
  const [syncNow, syncing] = useAction(async () => {
    await client.contexts.sync(id);
    reload();
  });
  const sync = fresh.data ?? row.sync;
  const summary = syncSummary(sync);
  if (!sync || !summary) return null;
  return (
    <div class="stack" data-testid="sync-panel">
      <dl class="facts">
        <dt>Status</dt>
        <dd>
          <SyncBadge sync={sync} /> <span class="muted">{summary.explanation}</span>
        </dd>
        <dt>State</dt>
        <dd data-testid="sync-state">{stateWords(sync.state)}</dd>
        <dt>Behind</dt>
        <dd>
          {sync.behind} known missing, {sync.pending} waiting for parents or a key, {sync.quarantined} refused
        </dd>
        <dt>Last sync</dt>
        <dd data-testid="sync-last">
          <At iso={sync.lastSyncAt} />
          {sync.failureCount ? ` (${sync.failureCount} failed since${sync.lastError ? `: ${sync.lastError}` : ''})` : ''}
        </dd>
      </dl>
      <div>
        <p class="muted">Why it may be behind:</p>
        {sync.reasons.length ? (
          <ul class="plain" aria-label="sync reasons">
            {sync.reasons.map((r) => (
              <li data-reason={r.reason}>
                <code>{r.reason}</code> {r.detail} <span class="muted">(noted <At iso={r.at} />)</span>
              </li>
            ))}
          </ul>
        ) : (
          <p data-testid="sync-no-reasons">nothing: no reason is known</p>
        )}
      </div>
      <div>
        <p class="muted">Peers last heard from about this context:</p>
        {sync.peers.length ? (
          <ul class="plain" aria-label="sync peers">
            {sync.peers.map((p) => (
              <li class="row">
                <Id value={p.peer} keep={16} /> <At iso={p.lastHeardAt} />
              </li>
            ))}
          </ul>
        ) : (
          <p data-testid="sync-no-peers">none yet</p>
        )}
      </div>
      <div class="row">
        <button type="button" onClick={() => void syncNow()} disabled={syncing.busy}>
          {syncing.busy ? 'Asking…' : 'Sync now'}
        </button>
        <span class="muted">pulls from every connected peer that holds this context</span>
      </div>
      <ErrorNote error={fresh.error ?? syncing.error} />
    </div>
  );
}

/** The list's column: a badge per context, shown only when some context has a status. */
export const SYNC_COLUMN: ContextColumn = { header: 'Sync', cell: (r) => <SyncBadge sync={r.sync} />, shows: hasSync };

export const SYNC_PANEL: ContextPanel = { title: 'Sync', component: SyncPanel, shows: hasSync };
