/**
 * Ephemeral presence (admin spec "Events" rule 3; admin-wire-a §8.4 "Presence rules"): one slot per
 * (context, author) holding the author's latest bytes, last writer wins, in memory only.
 *
 * - `set` publishes a live `Ephemeral` context event `{author, state}` only when the bytes changed
 *   (a heartbeat re-sending identical bytes is no news).
 * - The node's own slots (`set_ephemeral`) never expire while the node runs. Slots heard from
 *   elsewhere — a peer, or a relay for an account (`presence-intents`) — carry a TTL (7 s, the
 *   reference's) and, unless refreshed, are removed with an `{author, removed:true}` event.
 * - `snapshot` is the replay seed a new subscriber receives: `{author, state, ageMs}` per live slot,
 *   `ageMs` being the time since the slot was last heard.
 */
import type { Clock } from '../clock.ts';
import { badRequest } from '../errors.ts';
import type { EventBus } from '../bus.ts';
import { PRESENCE_MAX_BYTES, SWEEP_INTERVAL_MS } from './constants.ts';

/** Most authors one context may hold presence for (ours: bounds memory). */
export const MAX_AUTHORS_PER_CONTEXT = 1024;

interface Slot {
  state: Uint8Array;
  heardAt: number;
  /** null: never expires (the node's own slot) */
  expiresAt: number | null;
}

export interface PresenceEntry {
  author: string;
  state: number[];
  ageMs: number;
}

export interface SetOptions {
  /** the slot expires this long after it was last set (remote and relayed slots) */
  ttlMs?: number;
}

export class PresenceService {
  private readonly contexts = new Map<string, Map<string, Slot>>();
  private sweeper?: NodeJS.Timeout;

  constructor(private readonly d: { bus: EventBus; clock: Clock }) {}

  start(): void {
    this.sweeper ??= setInterval(() => this.sweep(), SWEEP_INTERVAL_MS);
    this.sweeper.unref();
  }

  stop(): void {
    clearInterval(this.sweeper);
    this.sweeper = undefined;
  }

  /** Records `author`'s presence in a context; returns whether the bytes changed (and an event went out). */
  set(contextId: string, author: string, state: Uint8Array, opts: SetOptions = {}): boolean {
    if (state.length > PRESENCE_MAX_BYTES) throw badRequest(`presence state is ${state.length} bytes; at most ${PRESENCE_MAX_BYTES} are allowed`);
    const now = this.d.clock.now();
    let slots = this.contexts.get(contextId);
    if (!slots) this.contexts.set(contextId, (slots = new Map()));
    const prev = slots.get(author);
    if (!prev && slots.size >= MAX_AUTHORS_PER_CONTEXT) {
      throw badRequest(`context ${contextId} already holds presence for ${MAX_AUTHORS_PER_CONTEXT} authors`);
    }
    const expiresAt = opts.ttlMs === undefined ? null : now + opts.ttlMs;
    const changed = !prev || !sameBytes(prev.state, state);
    slots.set(author, { state: Uint8Array.from(state), heardAt: now, expiresAt });
    if (changed) {
      this.d.bus.publish({ type: 'context', contextId, kind: 'Ephemeral', data: { author, state: Array.from(state) } });
    }
    return changed;
  }

  /** Removes `author`'s slot (a retraction), announcing it with `removed: true`; false when it held none. */
  clear(contextId: string, author: string): boolean {
    const slots = this.contexts.get(contextId);
    if (!slots?.delete(author)) return false;
    if (slots.size === 0) this.contexts.delete(contextId);
    this.d.bus.publish({ type: 'context', contextId, kind: 'Ephemeral', data: { author, removed: true } });
    return true;
  }

  /** The live slots of a context, as replay seeds. */
  snapshot(contextId: string): PresenceEntry[] {
    const now = this.d.clock.now();
    const out: PresenceEntry[] = [];
    for (const [author, slot] of this.contexts.get(contextId) ?? []) {
      if (slot.expiresAt !== null && slot.expiresAt <= now) continue;
      out.push({ author, state: Array.from(slot.state), ageMs: Math.max(0, now - slot.heardAt) });
    }
    return out;
  }

  /** Removes expired slots, announcing each removal. Runs on a timer; public for tests. */
  sweep(): void {
    const now = this.d.clock.now();
    for (const [contextId, slots] of this.contexts) {
      for (const [author, slot] of slots) {
        if (slot.expiresAt === null || slot.expiresAt > now) continue;
        slots.delete(author);
        this.d.bus.publish({ type: 'context', contextId, kind: 'Ephemeral', data: { author, removed: true } });
      }
      if (slots.size === 0) this.contexts.delete(contextId);
    }
  }

  /** Forgets a context's presence without events (the context was deleted or left). */
  dropContext(contextId: string): void {
    this.contexts.delete(contextId);
  }
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
