/**
 * The live event log (issue #16): one event stream for the whole app, so an event that happens
 * while another page is open is still in the log. It subscribes to every context and namespace
 * the node holds (and to those created later from the dashboard), keeps the last frames, and
 * resumes after a reload or a dropped connection (issue #25 §4): the entries shown and the id of
 * the last frame shown are kept together in `sessionStorage`, so a reload shows the same history and
 * asks the node (`Last-Event-ID`) for what came after exactly that frame; when the node could not
 * keep them all it sends a gap frame (docs/events.md "Resume contract"), shown as "N events missed
 * while away".
 */
import { EventStream, parseJson, stringifyJson, type Client, type StreamFrame } from '../../../src/client/index.ts';
import { goToLogin, sessionEndReason } from './session.ts';

const LAST_ID_KEY = 'hearth.dashboard.lastEventId';
const HISTORY_KEY = 'hearth.dashboard.eventLog';
/** more than the node's replay buffer (1024 frames): a full replay after a long absence does not push out what was shown before it, nor its gap line */
const KEEP = 2000;
/** the history is written at most this often (a replay of a thousand frames writes it once) */
const SAVE_DELAY_MS = 200;

export interface LogEntry {
  seq: number;
  at: Date;
  /** `gap`: the node said frames were missed (a note with `missed`) */
  kind: 'frame' | 'note' | 'gap';
  frame?: StreamFrame;
  note?: string;
  /** for a gap: how many frames were missed, null when the node could not say */
  missed?: number | null;
}

interface SavedHistory {
  seq: number;
  lastEventId?: string;
  entries: (Omit<LogEntry, 'at'> & { at: string })[];
}

/** The words for a gap frame (docs/events.md "Gap frame"). */
export function gapWords(missed: number | null | undefined): string {
  if (missed === null || missed === undefined) return 'Events missed while away: the node no longer kept this session, so how many is not known. What follows is live.';
  return `${missed} event${missed === 1 ? '' : 's'} missed while away: the node keeps the last 1024 per session. What follows is live.`;
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

  private lastShownId?: string;
  private saveTimer?: ReturnType<typeof setTimeout>;

  constructor(private readonly client: Client) {}

  /** Starts the stream over every context and namespace the node holds now, after the history kept across a reload. */
  async start(): Promise<void> {
    const restored = this.restore();
    const lastEventId = restored ? this.lastShownId : (sessionStorage.getItem(LAST_ID_KEY) ?? undefined);
    if (restored && this.entries.length) this.note('the page was reloaded: the entries below were shown before');
    addEventListener('pagehide', () => this.save());
    const stream = new EventStream(this.client.http, { lastEventId });
    this.stream = stream;
    stream.on('connect', ({ reconnect }) => {
      this.setStatus('live');
      this.note(reconnect ? 'resumed the previous session: missed events are replayed' : 'connected');
    });
    stream.on('frame', (frame) => {
      this.lastShownId = stream.lastEventId ?? this.lastShownId;
      if (stream.lastEventId) sessionStorage.setItem(LAST_ID_KEY, stream.lastEventId);
      this.push({ kind: 'frame', frame });
    });
    stream.on('gap', (gap) => this.push({ kind: 'gap', missed: gap.missed, note: gapWords(gap.missed) }));
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
    this.scheduleSave();
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
    this.scheduleSave();
    this.emit();
  }

  private scheduleSave(): void {
    if (this.saveTimer) return;
    this.saveTimer = setTimeout(() => this.save(), SAVE_DELAY_MS);
  }

  /** Writes the entries and the id of the last frame among them, together (one consistent point to resume from). */
  private save(): void {
    clearTimeout(this.saveTimer);
    this.saveTimer = undefined;
    const saved: SavedHistory = { seq: this.seq, lastEventId: this.lastShownId, entries: this.entries.map((e) => ({ ...e, at: e.at.toISOString() })) };
    try {
      sessionStorage.setItem(HISTORY_KEY, stringifyJson(saved));
    } catch {
      // storage full or refused: the history is not kept, the live log goes on
    }
  }

  private restore(): boolean {
    try {
      const raw = sessionStorage.getItem(HISTORY_KEY);
      if (!raw) return false;
      const saved = parseJson(raw) as SavedHistory;
      if (!Array.isArray(saved.entries)) return false;
      this.entries = saved.entries.map((e) => ({ ...e, at: new Date(e.at) }));
      this.seq = Number(saved.seq) || this.entries.length;
      this.lastShownId = typeof saved.lastEventId === 'string' ? saved.lastEventId : undefined;
      return true;
    } catch {
      return false;
    }
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
