/**
 * Contexts: create one (in a namespace of its application, or a new namespace), list them with
 * their alias names and sync status, and for the one selected: its state, its sync status, a form
 * to call a method with JSON arguments, its identities and aliases.
 *
 * Extending: a new column of the list is one entry in {@link CONTEXT_COLUMNS}; a new panel of the
 * selected context is one entry in {@link CONTEXT_PANELS} (the sync status is both, from
 * ./context-sync.tsx). Both receive a {@link ContextRow}, which carries what the list already
 * loaded, and may say for which rows they show (`shows`).
 */
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { HttpError, parseJson, stringifyJson, type Application } from '../../../../src/client/index.ts';
import { useDashboard } from '../app-context.ts';
import { pretty, size } from '../format.ts';
import { Card, ConfirmButton, ErrorNote, Field, Form, Id, Table, useAction, useLoad, useReachability, valueOf, type Column } from '../ui.tsx';
import { argumentTemplate, defaultMethod, isDestructive, isReadOnly, writeQuestion } from '../abi.ts';
import { useAbi } from '../use-abi.ts';
import { STATE_ENTRIES_PANEL } from './context-state.tsx';
import { aliasesById, appName } from './applications.tsx';
import { SYNC_COLUMN, SYNC_PANEL } from './context-sync.tsx';
import type { ContextColumn, ContextPanel, ContextRow, PanelProps } from './context-panel.ts';

/** Columns of the contexts list, in order. */
export const CONTEXT_COLUMNS: ContextColumn[] = [
  { header: 'Name', cell: (r) => (r.aliases.length ? <strong>{r.aliases.join(', ')}</strong> : (r.context.name ?? <span class="muted">–</span>)) },
  { header: 'Context', cell: (r) => <Id value={r.context.id} /> },
  { header: 'Application', cell: (r) => (r.application ? appName(r.application) : <Id value={r.context.applicationId} />) },
  { header: 'Group', cell: (r) => <Id value={r.context.groupId} /> },
  SYNC_COLUMN,
];

function StatePanel({ row }: PanelProps) {
  const { client } = useDashboard();
  const { context } = row;
  const storage = useLoad((signal) => client.contexts.storage(context.id, { signal }), [context.id]);
  const fresh = context.contextStateHash === 'f'.repeat(64);
  return (
    <dl class="facts">
      <dt>State size</dt>
      <dd data-testid="state-size">{storage.data === undefined ? (storage.error ? '–' : '…') : size(storage.data)}</dd>
      <dt>State hash</dt>
      <dd>{fresh ? <span class="muted">no state on this node yet</span> : <Id value={context.contextStateHash} keep={16} />}</dd>
      <dt>DAG heads</dt>
      <dd>{context.dagHeads?.length ?? 0}</dd>
      <dt>Application</dt>
      <dd>
        {row.application ? `${appName(row.application)} ${context.applicationVersion ?? row.application.version ?? ''}` : <span class="muted">{context.applicationId.slice(0, 12)}… not installed on this node</span>}
        {context.serviceName ? ` (service ${context.serviceName})` : ''}
      </dd>
      <ErrorNote error={storage.error} />
    </dl>
  );
}

function CallPanel({ row }: PanelProps) {
  const { client } = useDashboard();
  const { context } = row;
  const abi = useAbi(context);
  const methods = abi.data?.methods ?? [];
  const types = abi.data?.types ?? {};
  const [method, setMethod] = useState<string>();
  const [args, setArgs] = useState<string>();
  const [result, setResult] = useState<{ method: string; output: unknown }>();
  // starts on a read method, never a destructive one (abi.ts); the template follows the method chosen
  const chosen = method ?? defaultMethod(methods);
  const spec = methods.find((m) => m.name === chosen);
  const shownArgs = args ?? (spec ? argumentTemplate(spec, types) : '{}');
  const readOnly = isReadOnly(spec);
  const contextName = row.aliases[0] ?? context.name ?? `context ${context.id.slice(0, 10)}…`;
  const choose = (name: string) => {
    setMethod(name);
    setArgs(undefined);
    setResult(undefined);
  };
  const [call, calling] = useAction(async () => {
    if (!chosen) throw new Error('choose the method to call');
    let parsed: unknown;
    try {
      parsed = shownArgs.trim() === '' ? {} : parseJson(shownArgs);
    } catch (err) {
      throw new Error(`the arguments are not valid JSON: ${(err as Error).message}`);
    }
    // a method that writes (or one the ABI does not describe) asks first
    if (!readOnly && !confirm(spec ? writeQuestion(spec, contextName) : `${chosen} may change the state of ${contextName}. Run it?`)) return;
    setResult(undefined);
    const output = readOnly
      ? await client.contexts.query(context.id, chosen, parsed)
      : await client.rpc.execute(context.id, chosen, parsed);
    setResult({ method: chosen, output: output ?? null });
  });
  return (
    <Form class="stack" label="call a method" onSubmit={call}>
      <Field
        label="Method"
        hint={
          readOnly
            ? 'read-only: runs as a query, the state is not changed'
            : chosen
              ? `writes: changes the state on every node that holds it (asks first)${spec && isDestructive(spec) ? '; may delete state' : ''}`
              : undefined
        }
      >
        {methods.length ? (
          <select value={chosen} onChange={(e) => choose(valueOf(e))}>
            {chosen === '' ? <option value="">choose a method…</option> : null}
            {methods.map((m) => (
              <option value={m.name}>
                {m.name}
                {isReadOnly(m) ? ' (read-only)' : isDestructive(m) ? ' (writes, may delete)' : ' (writes)'}
              </option>
            ))}
          </select>
        ) : (
          <input value={chosen} onInput={(e) => setMethod(valueOf(e))} placeholder="method name" spellcheck={false} />
        )}
      </Field>
      <Field label="Arguments (JSON)" hint={spec?.params?.length ? 'a template from the ABI: fill in the values' : undefined}>
        <textarea rows={4} value={shownArgs} onInput={(e) => setArgs(valueOf(e))} spellcheck={false} class="mono" />
      </Field>
      <div class="row">
        <button type="submit" class="primary" disabled={calling.busy}>
          {calling.busy ? 'Calling…' : 'Call'}
        </button>
      </div>
      <ErrorNote error={calling.error} />
      {result ? (
        <div role="status" aria-label="call result">
          <p class="muted">
            {result.method} returned{result.output === null ? ' nothing' : ':'}
          </p>
          {result.output === null ? null : <pre class="result">{typeof result.output === 'string' ? result.output : pretty(result.output)}</pre>}
        </div>
      ) : null}
    </Form>
  );
}

function IdentitiesPanel({ row }: PanelProps) {
  const { client } = useDashboard();
  const ids = useLoad((signal) => client.contexts.identitiesOwned(row.context.id, { signal }), [row.context.id]);
  return (
    <div>
      <ErrorNote error={ids.error} />
      <p class="muted">Member identities this node holds the keys of:</p>
      <ul class="plain">{(ids.data?.identities ?? []).map((id) => <li><Id value={id} keep={24} /></li>)}</ul>
    </div>
  );
}

function AliasPanel({ row, reload }: PanelProps) {
  const { client } = useDashboard();
  const [name, setName] = useState('');
  const [add, adding] = useAction(async () => {
    await client.aliases.create('context', name.trim(), row.context.id);
    setName('');
    reload();
  });
  const [remove, removing] = useAction(async (alias: string) => {
    await client.aliases.delete('context', alias);
    reload();
  });
  return (
    <div class="stack">
      <ul class="plain">
        {row.aliases.map((a) => (
          <li class="row">
            <code>{a}</code>
            <button type="button" class="link" onClick={() => void remove(a)} disabled={removing.busy}>
              remove
            </button>
          </li>
        ))}
      </ul>
      <Form class="row" onSubmit={add}>
        <input aria-label="new alias" value={name} onInput={(e) => setName(valueOf(e))} placeholder="alias, e.g. kv-main" spellcheck={false} />
        <button type="submit" disabled={!name.trim() || adding.busy}>
          Add alias
        </button>
      </Form>
      <ErrorNote error={adding.error ?? removing.error} />
    </div>
  );
}

/** Panels of the selected context, in order. */
export const CONTEXT_PANELS: ContextPanel[] = [
  { title: 'State', component: StatePanel },
  STATE_ENTRIES_PANEL,
  SYNC_PANEL,
  { title: 'Call a method', component: CallPanel },
  { title: 'Aliases', component: AliasPanel },
  { title: 'Identities', component: IdentitiesPanel },
];

const NEW_NAMESPACE = 'new';

function CreateContext({ applications, onCreated }: { applications: Application[]; onCreated: (id: string) => void }) {
  const { client, events } = useDashboard();
  const reach = useReachability();
  const [appId, setAppId] = useState('');
  const [group, setGroup] = useState(NEW_NAMESPACE);
  const [name, setName] = useState('');
  const [params, setParams] = useState('');
  const application = appId || applications[0]?.id || '';
  const namespaces = useLoad((signal) => (application ? client.namespaces.forApplication(application, { signal }) : Promise.resolve([])), [application]);
  const [create, creating] = useAction(async () => {
    if (!application) throw new Error('install an application first (Applications page)');
    let init: unknown;
    if (params.trim() !== '') {
      try {
        init = parseJson(params);
      } catch (err) {
        throw new Error(`the init arguments are not valid JSON: ${(err as Error).message}`);
      }
    }
    const groupId = group === NEW_NAMESPACE ? (await client.namespaces.create({ applicationId: application, ...(name ? { name } : {}) })).namespaceId : group;
    const created = await client.contexts.create({
      groupId,
      applicationId: application,
      initializationParams: init === undefined ? [] : new TextEncoder().encode(stringifyJson(init)),
      ...(name ? { name } : {}),
    });
    events.watch({ contextIds: [created.contextId], groupIds: [groupId] });
    setName('');
    namespaces.reload();
    onCreated(created.contextId);
  });
  return (
    <Card title="Create a context">
      <Form class="grid" label="create a context" onSubmit={create}>
        <Field label="Application">
          <select value={application} onChange={(e) => setAppId(valueOf(e))} disabled={!applications.length}>
            {applications.length ? applications.map((a) => <option value={a.id}>{appName(a)} {a.version ?? ''}</option>) : <option value="">{reach.downSince ? 'not known while the node is not answering' : 'no application installed'}</option>}
          </select>
        </Field>
        <Field label="Namespace or group">
          <select value={group} onChange={(e) => setGroup(valueOf(e))}>
            <option value={NEW_NAMESPACE}>a new namespace</option>
            {(namespaces.data ?? []).map((n) => (
              <option value={n.namespaceId}>
                {n.name ? `${n.name} ` : ''}
                {n.namespaceId.slice(0, 10)}… ({n.contextCount} contexts)
              </option>
            ))}
          </select>
        </Field>
        <Field label="Name (optional)">
          <input value={name} onInput={(e) => setName(valueOf(e))} />
        </Field>
        <Field label="Init arguments (JSON, optional)">
          <input value={params} onInput={(e) => setParams(valueOf(e))} class="mono" spellcheck={false} placeholder="{}" />
        </Field>
        <div class="row">
          <button type="submit" class="primary" disabled={creating.busy || !applications.length}>
            {creating.busy ? 'Creating…' : 'Create context'}
          </button>
        </div>
      </Form>
      <ErrorNote error={creating.error ?? namespaces.error} />
    </Card>
  );
}

function Selected({ row, reload, onDeleted }: { row: ContextRow; reload: () => void; onDeleted: () => void }) {
  const { client } = useDashboard();
  const [remove, removing] = useAction(async () => {
    await client.contexts.delete(row.context.id);
    onDeleted();
  });
  const title = row.aliases[0] ?? row.context.name ?? `context ${row.context.id.slice(0, 10)}…`;
  return (
    <Card
      title={title}
      id="selected-context"
      actions={
        <ConfirmButton question={`Delete ${title} and its state on this node?`} onConfirm={() => void remove()} disabled={removing.busy}>
          Delete
        </ConfirmButton>
      }
    >
      <p class="muted">
        <Id value={row.context.id} keep={64} />
      </p>
      <ErrorNote error={removing.error} />
      <div class="panels">
        {CONTEXT_PANELS.filter((p) => p.shows?.(row) ?? true).map((p) => (
          <Panel title={p.title}>
            <p.component row={row} reload={reload} />
          </Panel>
        ))}
      </div>
    </Card>
  );
}

function Panel({ title, children }: { title: string; children: ComponentChildren }) {
  return (
    <section class="panel" aria-label={title}>
      <h3>{title}</h3>
      {children}
    </section>
  );
}

export function Contexts() {
  const { client } = useDashboard();
  const [selected, setSelected] = useState<string | undefined>(() => new URLSearchParams(location.search).get('context') ?? undefined);
  const select = (id: string | undefined) => {
    setSelected(id);
    history.replaceState(history.state, '', id ? `?context=${id}` : location.pathname);
  };
  const data = useLoad(async (signal) => {
    const [contexts, applications, aliases, statuses] = await Promise.all([
      client.contexts.list({ signal }),
      client.applications.list({ signal }),
      aliasesById(client.aliases.list('context', { signal })),
      // a node without a network answers 503: it has no sync status to show
      client.contexts.syncStatuses({ signal }).catch((err: unknown) => {
        if (err instanceof HttpError && err.status === 503) return [];
        throw err;
      }),
    ]);
    const apps = new Map(applications.map((a) => [a.id, a]));
    const syncs = new Map(statuses.map((s) => [s.contextId, s]));
    const rows: ContextRow[] = contexts.map((context) => ({
      context,
      aliases: aliases.get(context.id) ?? [],
      application: apps.get(context.applicationId),
      sync: syncs.get(context.id),
    }));
    return { rows, applications };
  });
  const rows = data.data?.rows ?? [];
  const current = rows.find((r) => r.context.id === selected);
  const columns: Column<ContextRow>[] = [
    ...CONTEXT_COLUMNS.filter((c) => !c.shows || rows.some(c.shows)),
    {
      header: '',
      cell: (r) => (
        <button type="button" class={r.context.id === selected ? 'primary' : ''} onClick={() => select(r.context.id)} aria-label={`open ${r.aliases[0] ?? r.context.id}`}>
          Open
        </button>
      ),
    },
  ];
  return (
    <div class="page">
      <h1>Contexts</h1>
      <CreateContext
        applications={data.data?.applications ?? []}
        onCreated={(id) => {
          select(id);
          data.reload();
        }}
      />
      <Card title="Contexts on this node" actions={<button type="button" onClick={data.reload}>Refresh</button>}>
        <ErrorNote error={data.error} />
        <Table label="contexts" rows={rows} rowKey={(r) => r.context.id} columns={columns} empty={data.loading ? 'Loading…' : 'No contexts yet: create one above.'} />
      </Card>
      {current ? (
        <Selected
          row={current}
          reload={data.reload}
          onDeleted={() => {
            select(undefined);
            data.reload();
          }}
        />
      ) : null}
    </div>
  );
}
