/**
 * Client-side pages under `/admin-dashboard/<page>` (the node answers every such path with the
 * app; src/dashboard/routes.ts). The fragment stays free for the login page's token hand-off.
 */
import { useEffect, useState } from 'preact/hooks';

export const BASE = '/admin-dashboard';

export function currentPage(): string {
  const rest = location.pathname.startsWith(BASE) ? location.pathname.slice(BASE.length) : '';
  return rest.replace(/^\/+|\/+$/g, '') || 'overview';
}

const listeners = new Set<() => void>();
addEventListener('popstate', () => listeners.forEach((fn) => fn()));

export function navigate(page: string): void {
  history.pushState(null, '', `${BASE}/${page}`);
  listeners.forEach((fn) => fn());
}

/** An in-app link's click: navigates here, unless the click asks for a new tab or window. */
export function follow(page: string): (e: MouseEvent) => void {
  return (e) => {
    if (e.ctrlKey || e.metaKey || e.shiftKey || e.button !== 0) return;
    e.preventDefault();
    navigate(page);
  };
}

/** The current page; re-renders on navigation and on the browser's back and forward. */
export function usePage(): string {
  const [page, setPage] = useState(currentPage);
  useEffect(() => {
    const update = () => setPage(currentPage());
    listeners.add(update);
    return () => void listeners.delete(update);
  }, []);
  return page;
}
