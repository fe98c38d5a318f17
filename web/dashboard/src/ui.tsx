/** The dashboard's building blocks: data loading, actions with their errors, tables, ids, progress. */
import type { ComponentChildren, TargetedEvent } from 'preact';
import { useCallback, useContext, useEffect, useRef, useState } from 'preact/hooks';
import { HttpError } from '../../../src/client/index.ts';
import { DashboardContext } from './app-context.ts';
import { short } from './format.ts';
import { isUnreachable, type Reachability } from './reachability.ts';
import { goToLogin, sessionEndReason } from './session.ts';

/** The message to show for a failure: the node's own `error` text when it sent one. */
export function messageOf(err: unknown): string {
  if (isUnreachable(err)) return 'The node did not answer: nothing was changed that it did not confirm.';
  if (err instanceof HttpError) return err.errorText ? `${err.errorText} (HTTP ${err.status})` : err.message;
  return err instanceof Error ? err.message : String(err);
}

/** A failure that ends the session sends the user to the login page with the reason. */
function checkSession(err: unknown): void {
  const reason = sessionEndReason(err);
  if (reason) goToLogin(reason);
}

export interface Loaded<T> {
  data?: T;
  error?: unknown;
  loading: boolean;
  reload(): void;
}

/** Loads `fn` on mount and whenever `deps` change; `reload()` loads again. */
export function useLoad<T>(fn: (signal: AbortSignal) => Promise<T>, deps: unknown[] = []): Loaded<T> {
  const reach = useContext(DashboardContext)?.reach;
  const [state, setState] = useState<{ data?: T; error?: unknown; loading: boolean }>({ loading: true });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    const ctrl = new AbortController();
    setState((s) => ({ ...s, loading: true }));
    fn(ctrl.signal).then(
      (data) => {
        reach?.answered();
        if (!ctrl.signal.aborted) setState({ data, loading: false });
      },
      (error: unknown) => {
        if (ctrl.signal.aborted) return;
        checkSession(error);
        if (isUnreachable(error)) reach?.failed(error);
        else reach?.answered();
        // what was shown stays shown while the node is away (it is not known to be wrong)
        setState((s) => ({ data: isUnreachable(error) ? s.data : undefined, error, loading: false }));
      },
    );
    return () => ctrl.abort();
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  // the node answers again: load what failed while it was away
  useEffect(() => reach?.onChange((_s, back) => back && reload()), [reach, reload]);
  return { ...state, reload };
}

/** Whether the node answers, re-rendering when that changes. */
export function useReachability(): Reachability {
  const reach = useContext(DashboardContext)?.reach;
  const [state, setState] = useState<Reachability>(reach?.state ?? { attempts: 0 });
  useEffect(() => reach?.onChange((s) => setState(s)), [reach]);
  return state;
}

/** Runs an action, keeping its busy state and its error for display. */
export function useAction<A extends unknown[]>(fn: (...args: A) => Promise<unknown>): [(...args: A) => Promise<boolean>, { busy: boolean; error?: unknown; clear(): void }] {
  const reach = useContext(DashboardContext)?.reach;
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const run = async (...args: A) => {
    setBusy(true);
    setError(undefined);
    try {
      await fn(...args);
      return true;
    } catch (err) {
      checkSession(err);
      reach?.failed(err);
      setError(err);
      return false;
    } finally {
      setBusy(false);
    }
  };
  return [run, { busy, error, clear: () => setError(undefined) }];
}

export function ErrorNote({ error }: { error?: unknown }) {
  const reach = useReachability();
  if (error === undefined) return null;
  // the frame's banner says the node is not answering; each card need not repeat it
  if (reach.downSince && isUnreachable(error)) return null;
  return (
    <p class="alert error" role="alert">
      {messageOf(error)}
    </p>
  );
}

export function Card({ title, children, actions, id }: { title: string; children: ComponentChildren; actions?: ComponentChildren; id?: string }) {
  return (
    <section class="card" aria-label={title} id={id}>
      <header>
        <h2>{title}</h2>
        {actions ? <div class="actions">{actions}</div> : null}
      </header>
      {children}
    </section>
  );
}

/** A long id: its name when known, else shortened; the whole id in its title, and a button that copies the id. */
export function Id({ value, keep = 10, name }: { value?: string | null; keep?: number; name?: string }) {
  const [copied, setCopied] = useState(false);
  if (!value) return <span class="muted">–</span>;
  const copy = () =>
    navigator.clipboard?.writeText(value).then(
      () => {
        setCopied(true);
        setTimeout(() => setCopied(false), 1200);
      },
      () => undefined,
    );
  return (
    <span class="id">
      {name ? (
        <span class="named" title={value} data-id={value}>
          {name}
        </span>
      ) : (
        <code title={value} data-id={value}>
          {short(value, keep)}
        </code>
      )}
      <button type="button" class="link" onClick={copy} aria-label={`copy ${value}`} title="copy">
        {copied ? 'copied' : 'copy'}
      </button>
    </span>
  );
}

export interface Column<T> {
  header: string;
  cell: (row: T) => ComponentChildren;
  class?: string;
}

export function Table<T>({ rows, columns, empty, rowKey, label }: { rows: T[]; columns: Column<T>[]; empty: string; rowKey: (row: T) => string; label: string }) {
  const reach = useReachability();
  if (rows.length === 0) {
    // an empty list from a node that is not answering is not known to be empty
    if (reach.downSince) return <p class="muted empty" data-testid="not-known">Not known while the node is not answering.</p>;
    return <p class="muted empty">{empty}</p>;
  }
  return (
    <div class="table-wrap">
      <table aria-label={label}>
        <thead>
          <tr>
            {columns.map((c) => (
              <th scope="col" class={c.class}>
                {c.header}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={rowKey(row)}>
              {columns.map((c) => (
                <td class={c.class}>{c.cell(row)}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** A progress bar with its numbers in words (for people and for screen readers). */
export function ProgressBar({ value, max, label }: { value: number; max: number; label: string }) {
  const pct = max > 0 ? Math.floor((value / max) * 100) : 0;
  return (
    <div class="progress">
      <progress value={value} max={max || 1} aria-label={label} />
      <span>{pct}%</span>
    </div>
  );
}

export function Field({ label, children, hint }: { label: string; children: ComponentChildren; hint?: string }) {
  return (
    <label class="field">
      <span>{label}</span>
      {children}
      {hint ? <small class="muted">{hint}</small> : null}
    </label>
  );
}

/** A form that runs `onSubmit` instead of navigating (every form of the dashboard). */
export function Form({ onSubmit, label, class: cls, children }: { onSubmit: () => unknown; label?: string; class?: string; children: ComponentChildren }) {
  return (
    <form
      class={cls}
      aria-label={label}
      onSubmit={(e) => {
        e.preventDefault();
        void onSubmit();
      }}
    >
      {children}
    </form>
  );
}

export type SendFile = (file: File, onProgress: (loaded: number, total: number | undefined) => void) => Promise<string>;

/**
 * Pick a file and send it, with a progress bar while it uploads: `send` answers the id of what it
 * made (a blob, an application), which the form then shows; `waiting` is said once every byte is
 * sent and the node is still working.
 */
export function FileUpload(props: { label: string; formLabel?: string; accept?: string; button: string; busy: string; waiting?: string; done: string; send: SendFile }) {
  const [file, setFile] = useState<File>();
  const [progress, setProgress] = useState<{ loaded: number; total: number }>();
  const [made, setMade] = useState<string>();
  const [send, state] = useAction(async () => {
    if (!file) throw new Error('choose a file first');
    setMade(undefined);
    setProgress({ loaded: 0, total: file.size });
    setMade(await props.send(file, (loaded, total) => setProgress({ loaded, total: total ?? file.size })));
  });
  return (
    <div>
      <Form class="row" label={props.formLabel} onSubmit={send}>
        <label class="field grow">
          <span>{props.label}</span>
          <input type="file" accept={props.accept} onChange={(e) => setFile(e.currentTarget.files?.[0])} />
        </label>
        <button type="submit" class="primary" disabled={!file || state.busy}>
          {state.busy ? props.busy : props.button}
        </button>
      </Form>
      {progress && (state.busy || made) ? <ProgressBar value={progress.loaded} max={progress.total} label="upload" /> : null}
      {props.waiting && state.busy && progress && progress.loaded >= progress.total ? <p class="muted">{props.waiting}</p> : null}
      {made ? (
        <p class="alert ok" role="status">
          {props.done} <Id value={made} keep={16} />
        </p>
      ) : null}
      <ErrorNote error={state.error} />
    </div>
  );
}

/** A button for an action that asks first (destructive verbs). */
export function ConfirmButton({ question, onConfirm, children, disabled, class: cls }: { question: string; onConfirm: () => void; children: ComponentChildren; disabled?: boolean; class?: string }) {
  return (
    <button type="button" class={cls ?? 'danger'} disabled={disabled} onClick={() => confirm(question) && onConfirm()}>
      {children}
    </button>
  );
}

/** Keeps a value in a ref so long-lived callbacks see the latest one. */
export function useLatest<T>(value: T) {
  const ref = useRef(value);
  ref.current = value;
  return ref;
}

export type InputEvent = TargetedEvent<HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement, Event>;
export const valueOf = (e: InputEvent) => e.currentTarget.value;
