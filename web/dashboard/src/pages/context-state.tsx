/**
 * The state browser of the selected context (issue #25 §4; docs/dashboard.md): the entries the
 * application lists through a read-only view method its ABI names (`entries`, else the first
 * read-only method without parameters returning a map or a list; abi.ts), as key, size and a
 * text or hex preview, 20 to a page. Read-only: it runs the method as a query, never a call.
 * An application whose ABI names no such method (or that has no ABI) is browsed by its raw storage
 * rows instead (raw-state.tsx, hearth's raw-state route). An application not installed on this node
 * (404) is named with what the node is doing about it: fetching it from peers, or the fix.
 */
import { useState } from 'preact/hooks';
import { HttpError } from '../../../../src/client/index.ts';
import { entriesMethod } from '../abi.ts';
import { useDashboard } from '../app-context.ts';
import { size } from '../format.ts';
import { entryRows } from '../state-entries.ts';
import { applicationProblem } from '../sync-status.ts';
import { useAbi } from '../use-abi.ts';
import { ErrorNote, Table, useLoad } from '../ui.tsx';
import type { ContextPanel, PanelProps } from './context-panel.ts';
import { RawStateRows } from './raw-state.tsx';

export const PAGE_SIZE = 20;

function StateEntries({ row }: PanelProps) {
  const { client } = useDashboard();
  const { context } = row;
  const abi = useAbi(context);
  const method = abi.data ? entriesMethod(abi.data.methods, abi.data.types) : undefined;
  const [page, setPage] = useState(0);
  const rows = useLoad(
    async (signal) => (method ? entryRows(await client.contexts.query(context.id, method.name, {}, { signal })) : []),
    [context.id, method?.name],
  );
  // 404: the application is not installed on this node (being fetched from peers, or missing)
  if (abi.error instanceof HttpError && abi.error.status === 404) return <MissingApplication applicationId={context.applicationId} contextId={context.id} />;
  if (abi.data && !method) return <RawStateRows context={context} />;
  const all = rows.data ?? [];
  const pages = Math.max(1, Math.ceil(all.length / PAGE_SIZE));
  const current = Math.min(page, pages - 1);
  const shown = all.slice(current * PAGE_SIZE, (current + 1) * PAGE_SIZE);
  return (
    <div class="stack">
      <div class="row">
        <span class="muted" data-testid="entries-range">
          {method ? (
            <>
              from <code>{method.name}()</code>
              {all.length ? `: entries ${current * PAGE_SIZE + 1}–${current * PAGE_SIZE + shown.length} of ${all.length}` : ''}
            </>
          ) : (
            '…'
          )}
        </span>
        <span class="grow" />
        <button type="button" onClick={() => setPage(current - 1)} disabled={current === 0} aria-label="previous page">
          ‹ Previous
        </button>
        <button type="button" onClick={() => setPage(current + 1)} disabled={current >= pages - 1} aria-label="next page">
          Next ›
        </button>
        <button type="button" onClick={rows.reload}>
          Refresh
        </button>
      </div>
      <ErrorNote error={abi.error ?? rows.error} />
      <Table
        label="state entries"
        rows={shown}
        rowKey={(r) => r.key}
        empty={rows.loading || abi.loading ? 'Loading…' : 'No entries: the state is empty.'}
        columns={[
          { header: 'Key', cell: (r) => <code>{r.key}</code> },
          { header: 'Size', cell: (r) => size(r.size), class: 'num' },
          { header: 'Value', cell: (r) => <code class={`preview ${r.as}`} title={r.as === 'hex' ? 'bytes, in hex' : undefined}>{r.preview}</code> },
        ]}
      />
    </div>
  );
}

/** What this node is doing about the context's missing application (its sync status says), and the fix. */
function MissingApplication({ applicationId, contextId }: { applicationId: string; contextId: string }) {
  const { client } = useDashboard();
  const sync = useLoad((signal) => client.contexts.syncStatus(contextId, { signal }), [contextId]);
  const problem = applicationProblem(sync.data);
  return (
    <div class="stack">
      <p data-testid="application-missing">
        {problem?.reason === 'fetching_application'
          ? `The application ${applicationId} is being fetched from the context's peers: ${problem.detail}.`
          : (problem?.detail ?? `The application ${applicationId} is not installed on this node: install it with hearth app install-dev <bundle.mpk>.`)}
      </p>
      <div class="row">
        <button type="button" onClick={sync.reload}>
          Refresh
        </button>
      </div>
    </div>
  );
}

export const STATE_ENTRIES_PANEL: ContextPanel = { title: 'State entries', component: StateEntries };
