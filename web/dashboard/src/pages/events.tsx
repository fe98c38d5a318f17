/** The live event log: every frame of the node's event stream since the dashboard opened (resumable). */
import { useEffect, useState } from 'preact/hooks';
import { displayBytes, isByteArray, type StreamFrame } from '../../../../src/client/index.ts';
import { useDashboard } from '../app-context.ts';
import { pretty, short } from '../format.ts';
import { useNames, type Names } from '../names.ts';
import { Card, Id } from '../ui.tsx';
import type { LogEntry } from '../event-log.ts';

/** One line of a frame's payload, byte arrays shown as text (or hex). */
export function frameDetails(frame: StreamFrame): string {
  const data = (frame.data ?? {}) as Record<string, unknown>;
  if (frame.type === 'StateMutation' && Array.isArray(data.events)) {
    const events = (data.events as { kind: string; data?: unknown }[]).map((e) => (isByteArray(e.data) && e.data.length ? `${e.kind} ${displayBytes(e.data)}` : e.kind));
    return [`root ${short(String(data.newRoot), 12)}`, ...events].join('  ·  ');
  }
  if (frame.type === 'Ephemeral') {
    return `author ${short(String(data.author), 12)}${data.removed ? ' removed' : isByteArray(data.state) ? ` ${displayBytes(data.state)}` : ''}`;
  }
  return Object.keys(data).length ? pretty(data).replace(/\s+/g, ' ') : '';
}

const frameId = (frame: StreamFrame): { kind: 'context' | 'group'; id: string } =>
  'contextId' in frame ? { kind: 'context', id: frame.contextId } : { kind: 'group', id: (frame as { groupId: string }).groupId };

/** Where a frame comes from: the context's alias or name (the namespace's name), the id on hover and copy. */
function Where({ frame, names }: { frame: StreamFrame; names: Names }) {
  const { kind, id } = frameId(frame);
  const name = names.get(id);
  return (
    <span class="where">
      {kind}{' '}
      {name ? <Id value={id} name={name} /> : <code title={id}>{short(id)}</code>}
    </span>
  );
}

export function Events() {
  const { events } = useDashboard();
  const [, setVersion] = useState(0);
  useEffect(() => events.onChange(() => setVersion((v) => v + 1)), [events]);
  const watching = events.watching;
  const names = useNames([...new Set(events.entries.flatMap((e) => (e.frame ? [frameId(e.frame).id] : [])))]);
  return (
    <div class="page">
      <h1>Event log</h1>
      <Card
        title="Live events"
        actions={
          <span class="row">
            <span class={`badge ${events.status === 'live' ? 'good' : 'bad'}`} data-testid="stream-status">
              {events.status}
            </span>
            <button type="button" onClick={() => events.clear()}>
              Clear
            </button>
          </span>
        }
      >
        <p class="muted">
          Watching {watching.contexts} context{watching.contexts === 1 ? '' : 's'} and {watching.groups} namespace{watching.groups === 1 ? '' : 's'}. The log resumes where it left off after a reload or a dropped connection.
        </p>
        {events.entries.length === 0 ? (
          <p class="muted empty">No events yet: call a method of a context and its state change shows here.</p>
        ) : (
          <ol class="log" aria-label="events">
            {events.entries.map((e: LogEntry) =>
              e.kind === 'gap' ? (
                <li key={e.seq} class="gap" data-testid="event-gap" data-missed={e.missed ?? ''}>
                  <time>{e.at.toLocaleTimeString()}</time> <strong>{e.note}</strong>
                </li>
              ) : e.kind === 'note' ? (
                <li key={e.seq} class="note">
                  <time>{e.at.toLocaleTimeString()}</time> <span class="muted">{e.note}</span>
                </li>
              ) : (
                <li key={e.seq} class="frame" data-type={e.frame!.type}>
                  <time>{e.at.toLocaleTimeString()}</time> <Where frame={e.frame!} names={names} /> <strong>{e.frame!.type}</strong>{' '}
                  <span class="details">{frameDetails(e.frame!)}</span>
                </li>
              ),
            )}
          </ol>
        )}
      </Card>
    </div>
  );
}
