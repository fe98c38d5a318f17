/**
 * Names for ids (issue #25 §4 "rows name contexts and peers by alias or node name when known"):
 * a context by its alias, else its name; a namespace by its name. Loaded from the node's lists
 * (contexts, context aliases, namespaces), read again when an id without a name shows up (at most
 * every few seconds). The id stays on hover and on the copy button (ui.tsx `Id`).
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import type { Client } from '../../../src/client/index.ts';
import { useDashboard } from './app-context.ts';

export type Names = Map<string, string>;

const AGAIN_MS = 5_000;

export async function loadNames(client: Client, signal?: AbortSignal): Promise<Names> {
  const [contexts, aliases, namespaces] = await Promise.all([
    client.contexts.list({ signal }).catch(() => []),
    client.aliases.list('context', { signal }).catch(() => ({}) as Record<string, string>),
    client.namespaces.list({ signal }).catch(() => []),
  ]);
  const names: Names = new Map();
  for (const n of namespaces) if (n.name) names.set(n.namespaceId, n.name);
  for (const c of contexts) if (c.name) names.set(c.id, c.name);
  // an alias is what the person chose to call it here: it wins over the context's own name
  const aliased = new Set<string>();
  for (const [alias, id] of Object.entries(aliases)) {
    if (aliased.has(id)) continue; // the first of several aliases
    aliased.add(id);
    names.set(id, alias);
  }
  return names;
}

/** The names the node knows; `wanted` ids without a name trigger another read (throttled). */
export function useNames(wanted: string[] = []): Names {
  const { client } = useDashboard();
  const [names, setNames] = useState<Names>(new Map());
  const last = useRef(0);
  const mounted = useRef(true);
  useEffect(() => () => void (mounted.current = false), []);
  const missing = wanted.some((id) => !names.has(id));
  useEffect(() => {
    if (last.current && !missing) return;
    // the first read at once, another one for unnamed ids at most every AGAIN_MS
    const wait = last.current ? Math.max(0, last.current + AGAIN_MS - Date.now()) : 0;
    const timer = setTimeout(() => {
      last.current = Date.now();
      void loadNames(client).then((n) => mounted.current && setNames(n), () => undefined);
    }, wait);
    return () => clearTimeout(timer);
  }, [client, missing, wanted.length]);
  return names;
}
