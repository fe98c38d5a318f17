/**
 * The live event log (issue #16): one event stream for the whole app, so an event that happens
 * while another page is open is still in the log. It subscribes to every context and namespace
 * the node holds (and to those created later from the dashboard), keeps the last frames, and
 * resumes after a reload or a dropped connection: the id of the last frame is kept in
 * `sessionStorage` and sent back as `Last-Event-ID`, so the node replays what was missed (or says
 * it could not, with a gap frame; docs/events.md).
 */
import { EventStream, type Client, type StreamFrame } from '../../../src/client/index.ts';
import { goToLogin, sessionEndReason } from './session.ts';

const LAST_ID_KEY = 'hearth.dashboard.lastEventId';
const KEEP = 500;

export interface LogEntry {
  seq: number;
  at: Date;
  kind: 'frame' | 'note';
  frame?: StreamFrame;
  note?: string;
}

export type LogStatus = 'connecting' | 'live' | 'reconnecting' | 'stopped';

export class EventLog {
  entries: LogEntry[] = [];
  status: LogStatus = 'connecting';
  private seq = 0;
  private readonly listeners = new Set<() => void>();
  private stream?: EventStream;
  private readonly contexts = new Set<string>();
  private readonly groups = new Set<string>();

  constructor(private readonly client: Client) {}

  /** Starts the stream over every context and namespace the node holds now. */
  async start(): Promise<void> {
    const lastEventId = sessionStorage.getItem(LAST_ID_KEY) ?? undefined;
    const stream = new EventStream(this.client.http, { lastEventId });
    this.stream = stream;
    stream.on('connect', ({ reconnect }) => {
      this.setStatus('live');
      this.note(reconnect ? 'resumed the previous session: missed events are replayed' : 'connected');
    });
    stream.on('frame', (frame) => {
      if (stream.lastEventId) sessionStorage.setItem(LAST_ID_KEY, stream.lastEventId);
      this.push({ kind: 'frame', frame });
    });
    stream.on('gap', (gap) => this.note(`the node could not replay every event (${gap.reason}${gap.missed === null ? '' : `, ${gap.missed} missed`})`));
    stream.on('close', ({ reason }) => this.note(`the node ended the stream: ${reason}`));
    stream.on('disconnect', () => this.setStatus('reconnecting'));
    stream.on('error', (err) => {
      const reason = sessionEndReason(err);
      if (reason) goToLogin(reason);
    });
    const [contexts, namespaces] = await Promise.all([
      this.client.contexts.list().catch(() => []),
      this.client.namespaces.list().catch(() => []),
    ]);
    this.watch({ contextIds: contexts.map((c) => c.id), groupIds: namespaces.map((n) => n.namespaceId) });
    stream.start();
  }

  stop(): void {
    this.stream?.stop();
    this.setStatus('stopped');
  }

  /** Adds contexts or groups to the subscription (e.g. one just created). */
  watch(ids: { contextIds?: string[]; groupIds?: string[] }): void {
    const contextIds = (ids.contextIds ?? []).filter((id) => !this.contexts.has(id));
    const groupIds = (ids.groupIds ?? []).filter((id) => !this.groups.has(id));
    if (contextIds.length + groupIds.length === 0) return;
    contextIds.forEach((id) => this.contexts.add(id));
    groupIds.forEach((id) => this.groups.add(id));
    this.stream?.subscribe({ contextIds, groupIds }).catch((err: unknown) => this.note(`subscription refused: ${err instanceof Error ? err.message : String(err)}`));
  }

  get watching(): { contexts: number; groups: number } {
    return { contexts: this.contexts.size, groups: this.groups.size };
  }

  clear(): void {
    this.entries = [];
    this.emit();
  }

  onChange(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => void this.listeners.delete(fn);
  }

  private note(note: string): void {
    this.push({ kind: 'note', note });
  }

  private push(entry: Omit<LogEntry, 'seq' | 'at'>): void {
    this.entries = [{ ...entry, seq: ++this.seq, at: new Date() }, ...this.entries].slice(0, KEEP);
    this.emit();
  }

  private setStatus(status: LogStatus): void {
    if (this.status === status) return;
    this.status = status;
    this.emit();
  }

  private emit(): void {
    this.listeners.forEach((fn) => fn());
  }
}
