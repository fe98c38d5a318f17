/** Applications: install a signed `.mpk` picked from disk (with upload progress), list, remove. */
import type { Application } from '../../../../src/client/index.ts';
import { useDashboard } from '../app-context.ts';
import { size } from '../format.ts';
import { Card, ConfirmButton, ErrorNote, FileUpload, Id, Table, useAction, useLoad, type SendFile } from '../ui.tsx';

/** `metadata` is UTF-8 JSON bytes `{package, version, name, …}`. */
export function appName(app: Application): string {
  try {
    const meta = JSON.parse(new TextDecoder().decode(Uint8Array.from(app.metadata ?? []))) as { name?: string };
    if (meta.name) return meta.name;
  } catch {
    /* no readable metadata: the package names it */
  }
  return app.package ?? app.id;
}

/** Application aliases by id (an id may carry several). */
export async function aliasesById(list: Promise<Record<string, string>>): Promise<Map<string, string[]>> {
  const byId = new Map<string, string[]>();
  for (const [name, id] of Object.entries(await list)) byId.set(id, [...(byId.get(id) ?? []), name]);
  return byId;
}

function Install({ onInstalled }: { onInstalled: () => void }) {
  const { client } = useDashboard();
  const send: SendFile = async (file, onProgress) => {
    const { applicationId } = await client.applications.installBundle(file, { onProgress });
    onInstalled();
    return applicationId;
  };
  return (
    <Card title="Install an application">
      <FileUpload label="Signed bundle (.mpk)" accept=".mpk" button="Install" busy="Installing…" waiting="Verifying the bundle on the node…" done="Installed application" send={send} />
      <p class="muted">
        Build and sign one with <code>hearth app bundle</code> (see docs/applications.md). Registry installs: <code>hearth app install &lt;package&gt;@&lt;version&gt;</code>.
      </p>
    </Card>
  );
}

export function Applications() {
  const { client } = useDashboard();
  const apps = useLoad(async (signal) => {
    const [list, aliases] = await Promise.all([client.applications.list({ signal }), aliasesById(client.aliases.list('application', { signal }))]);
    return list.map((app) => ({ app, aliases: aliases.get(app.id) ?? [] }));
  });
  const [remove, removing] = useAction(async (id: string) => {
    await client.applications.uninstall(id);
    apps.reload();
  });
  return (
    <div class="page">
      <h1>Applications</h1>
      <Install onInstalled={apps.reload} />
      <Card title="Installed" actions={<button type="button" onClick={apps.reload}>Refresh</button>}>
        <ErrorNote error={apps.error ?? removing.error} />
        <Table
          label="installed applications"
          rows={apps.data ?? []}
          rowKey={(r) => r.app.id}
          empty={apps.loading ? 'Loading…' : 'No applications installed yet.'}
          columns={[
            { header: 'Application', cell: (r) => <strong>{appName(r.app)}</strong> },
            { header: 'Alias', cell: (r) => (r.aliases.length ? r.aliases.join(', ') : <span class="muted">–</span>) },
            { header: 'Package', cell: (r) => r.app.package ?? '–' },
            { header: 'Version', cell: (r) => r.app.version ?? '–' },
            { header: 'Id', cell: (r) => <Id value={r.app.id} /> },
            { header: 'Size', cell: (r) => size(r.app.size), class: 'num' },
            {
              header: '',
              cell: (r) => (
                <ConfirmButton question={`Uninstall ${appName(r.app)}? Its contexts stop working on this node.`} onConfirm={() => void remove(r.app.id)} disabled={removing.busy}>
                  Remove
                </ConfirmButton>
              ),
            },
          ]}
        />
      </Card>
    </div>
  );
}
