/** The dashboard's frame: the navigation, the session's corner, and the page of the current path. */
import type { FunctionComponent } from 'preact';
import { useDashboard } from './app-context.ts';
import { navigate, usePage, BASE } from './router.ts';
import { Applications } from './pages/applications.tsx';
import { Blobs } from './pages/blobs.tsx';
import { Contexts } from './pages/contexts.tsx';
import { Events } from './pages/events.tsx';
import { Groups } from './pages/groups.tsx';
import { Keys } from './pages/keys.tsx';
import { Metrics } from './pages/metrics.tsx';
import { Network } from './pages/network.tsx';
import { Overview } from './pages/overview.tsx';
import { downSentence } from './reachability.ts';
import { useReachability } from './ui.tsx';

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
        <NodeDown />
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

/** The banner while the node does not answer (reachability.ts): once, above whatever page is open. */
function NodeDown() {
  const reach = useReachability();
  if (!reach.downSince) return null;
  return (
    <div class="banner" role="alert" data-testid="node-down">
      <strong>{downSentence(location.host, reach.downSince)}</strong>
      <span class="muted">
        {' '}
        What the pages show was read before; it comes back up to date when the node answers{reach.attempts ? ` (${reach.attempts} attempt${reach.attempts === 1 ? '' : 's'} so far)` : ''}.
      </span>
    </div>
  );
}
