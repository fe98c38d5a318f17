/** The dashboard's frame: the navigation, the session's corner, and the page of the current path. */
import type { FunctionComponent } from 'preact';
import { useDashboard } from './app-context.ts';
import { navigate, usePage, BASE } from './router.ts';
import { clock, useReachability } from './reachability.ts';
import { Applications } from './pages/applications.tsx';
import { Blobs } from './pages/blobs.tsx';
import { Contexts } from './pages/contexts.tsx';
import { Events } from './pages/events.tsx';
import { Groups } from './pages/groups.tsx';
import { Keys } from './pages/keys.tsx';
import { Metrics } from './pages/metrics.tsx';
import { Network } from './pages/network.tsx';
import { Overview } from './pages/overview.tsx';

export const PAGES: { path: string; title: string; component: FunctionComponent }[] = [
  { path: 'overview', title: 'Overview', component: Overview },
  { path: 'applications', title: 'Applications', component: Applications },
  { path: 'contexts', title: 'Contexts', component: Contexts },
  { path: 'groups', title: 'Namespaces & groups', component: Groups },
  { path: 'blobs', title: 'Blobs', component: Blobs },
  { path: 'keys', title: 'Keys', component: Keys },
  { path: 'events', title: 'Event log', component: Events },
  { path: 'network', title: 'Network', component: Network },
  { path: 'metrics', title: 'Metrics', component: Metrics },
];

/** "node at … is not answering since hh:mm:ss, retrying", while it does not answer. */
function Unreachable() {
  const { downSince } = useReachability();
  if (!downSince) return null;
  return (
    <p class="alert error banner" role="alert">
      node at {location.origin} is not answering since {clock(downSince)}, retrying
    </p>
  );
}

export function App() {
  const { session } = useDashboard();
  const page = usePage();
  const current = PAGES.find((p) => p.path === page);
  return (
    <div class="shell">
      <nav aria-label="pages">
        <p class="brand">hearth</p>
        <ul>
          {PAGES.map((p) => (
            <li>
              <a
                href={`${BASE}/${p.path}`}
                aria-current={p.path === page ? 'page' : undefined}
                onClick={(e) => {
                  if (e.ctrlKey || e.metaKey || e.shiftKey || e.button !== 0) return;
                  e.preventDefault();
                  navigate(p.path);
                }}
              >
                {p.title}
              </a>
            </li>
          ))}
        </ul>
        <div class="session">
          <small class="muted" title={session.keyId()}>
            {location.host}
          </small>
          <button type="button" onClick={() => void session.signOut()}>
            Sign out
          </button>
        </div>
      </nav>
      <main>
        <Unreachable />
        {current ? (
          <current.component key={current.path} />
        ) : (
          <div class="page">
            <h1>No such page</h1>
            <p>
              <a href={`${BASE}/overview`}>Go to the overview</a>
            </p>
          </div>
        )}
      </main>
    </div>
  );
}
