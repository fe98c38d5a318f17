/**
 * The state browser's fallback (issue #25 §4; docs/dashboard.md "State browser"): when the
 * application's ABI names no listing method, the context's raw storage rows from hearth's
 * admin-only route `GET /contexts/{id}/raw-state` — key, size and a preview — 20 to a page, paged
 * by key (the route's `next`), and one row's value on demand. Read-only.
 */
import { useState } from 'preact/hooks';
import type { RawStateEntry, RawStateValue } from '../../../../src/client/index.ts';
import { useDashboard } from '../app-context.ts';
import { size } from '../format.ts';
import { rawKeyLabel, rawValueText } from '../state-entries.ts';
import { ErrorNote, Table, useLoad } from '../ui.tsx';
import type { Context } from '../../../../src/client/index.ts';

export const RAW_PAGE_SIZE = 20;

const previewOf = (e: RawStateEntry) => (e.previewEncoding === 'hex' ? e.preview.replace(/(..)(?!$)/g, '$1 ') : e.preview) + (e.size > 64 ? '…' : '');

export function RawStateRows({ context }: { context: Context }) {
  const { client } = useDashboard();
  // the `after` key of each page seen so far: page i starts after cursors[i]
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined]);
  const [at, setAt] = useState(0);
  const [shown, setShown] = useState<RawStateValue | undefined>();
  const [valueError, setValueError] = useState<unknown>();
  const page = useLoad((signal) => client.contexts.rawState(context.id, { after: cursors[at], limit: RAW_PAGE_SIZE }, { signal }), [context.id, cursors[at]]);
  const rows = page.data?.entries ?? [];
  const next = page.data?.next ?? null;
  const view = async (key: string) => {
    setValueError(undefined);
    try {
      setShown(await client.contexts.rawStateValue(context.id, key));
    } catch (err) {
      setShown(undefined);
      setValueError(err);
    }
  };
  const value = shown && rawValueText(shown.value);
  return (
    <div class="stack">
      <p class="muted" data-testid="raw-state-note">
        raw storage rows (the application exposes no listing method): each key the application stored, the value's size, and its first bytes as text or hex.
      </p>
      <div class="row">
        <span class="muted" data-testid="entries-range">
          {rows.length ? `rows ${at * RAW_PAGE_SIZE + 1}–${at * RAW_PAGE_SIZE + rows.length}${next === null ? ' (the last)' : ''}` : ''}
        </span>
        <span class="grow" />
        <button type="button" onClick={() => setAt(at - 1)} disabled={at === 0} aria-label="previous page">
          ‹ Previous
        </button>
        <button
          type="button"
          onClick={() => {
            setCursors([...cursors.slice(0, at + 1), next ?? undefined]);
            setAt(at + 1);
          }}
          disabled={next === null}
          aria-label="next page"
        >
          Next ›
        </button>
        <button type="button" onClick={page.reload}>
          Refresh
        </button>
      </div>
      <ErrorNote error={page.error} />
      <Table
        label="raw state rows"
        rows={rows}
        rowKey={(r) => r.key}
        empty={page.loading ? 'Loading…' : 'No rows: the context holds no state on this node.'}
        columns={[
          { header: 'Key', cell: (r) => <code title={r.key}>{rawKeyLabel(r.key)}</code> },
          { header: 'Size', cell: (r) => size(r.size), class: 'num' },
          { header: 'Value', cell: (r) => <code class={`preview ${r.previewEncoding === 'hex' ? 'hex' : 'text'}`} title={r.previewEncoding === 'hex' ? 'bytes, in hex' : undefined}>{previewOf(r)}</code> },
          {
            header: '',
            cell: (r) => (
              <button type="button" onClick={() => void view(r.key)} aria-label={`view value of ${rawKeyLabel(r.key)}`}>
                View
              </button>
            ),
          },
        ]}
      />
      <ErrorNote error={valueError} />
      {shown && value && (
        <section aria-label="raw value" class="stack">
          <div class="row">
            <strong>
              <code>{rawKeyLabel(shown.key)}</code>
            </strong>
            <span class="muted">
              {size(shown.size)}, as {value.as === 'hex' ? 'hex' : 'text'}
              {shown.truncated ? ' — only the first 1 MiB is shown' : ''}
            </span>
            <span class="grow" />
            <button type="button" onClick={() => setShown(undefined)}>
              Close
            </button>
          </div>
          <pre class={`preview ${value.as}`} data-testid="raw-value">
            {value.text}
          </pre>
        </section>
      )}
    </div>
  );
}
