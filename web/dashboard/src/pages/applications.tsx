/**
 * Applications: install a signed `.mpk` picked from disk (with upload progress), or a raw `.wasm`
 * bundled for development with the node's key after asking; list, remove.
 */
import type { Application } from '../../../../src/client/index.ts';
import { useDashboard } from '../app-context.ts';
import { size } from '../format.ts';
import { useState } from 'preact/hooks';
import { Card, ConfirmButton, ErrorNote, Field, FileUpload, Form, Id, Table, useAction, useLoad, valueOf, type SendFile } from '../ui.tsx';

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

/** Whether a picked file is a raw WebAssembly module (`\0asm`), not a bundle. */
async function isRawWasm(file: File): Promise<boolean> {
  const head = new Uint8Array(await file.slice(0, 4).arrayBuffer());
  return head.length === 4 && head[0] === 0x00 && head[1] === 0x61 && head[2] === 0x73 && head[3] === 0x6d;
}

/** A package name for a module file: `dev.local.<file name>`, in the characters a package uses. */
export function devPackageOf(fileName: string): string {
  const stem = fileName.replace(/\.wasm$/i, '').toLowerCase().replace(/[^a-z0-9_-]+/g, '-').replace(/^-+|-+$/g, '');
  return `dev.local.${stem || 'app'}`;
}

/**
 * The offer for a raw `.wasm` (issue #34 §2): the node installs only signed bundles, so the page
 * asks the node to bundle the module with its development key (`PUT /admin-api/dev-bundle`) and
 * then installs that bundle as any other.
 */
function DevBundleOffer({ file, onInstalled, onCancel }: { file: File; onInstalled: (id: string) => void; onCancel: () => void }) {
  const { client } = useDashboard();
  const [pkg, setPkg] = useState(devPackageOf(file.name));
  const [version, setVersion] = useState('0.1.0');
  const [run, state] = useAction(async () => {
    const { bundle } = await client.applications.bundleDev(file, { package: pkg.trim(), version: version.trim() });
    const { applicationId } = await client.applications.installBundle(bundle);
    onInstalled(applicationId);
  });
  return (
    <div class="alert note" role="region" aria-label="bundle for development">
      <p>
        <strong>{file.name}</strong> is a raw WebAssembly module; the node installs only signed bundles (<code>.mpk</code>). Bundle it for
        development, signed with this node&apos;s development key (kept in the node&apos;s home), and install it?
      </p>
      <Form class="row" label="bundle for development" onSubmit={run}>
        <Field label="Package">
          <input value={pkg} onInput={(e) => setPkg(valueOf(e))} required />
        </Field>
        <Field label="Version">
          <input value={version} onInput={(e) => setVersion(valueOf(e))} required />
        </Field>
        <button type="submit" class="primary" disabled={state.busy}>
          {state.busy ? 'Bundling…' : 'Bundle and install'}
        </button>
        <button type="button" onClick={onCancel} disabled={state.busy}>
          Cancel
        </button>
      </Form>
      <p class="muted">
        For a bundle to publish, sign it with your own key: <code>hearth app bundle --wasm &lt;file&gt; --package … --version … --key …</code>.
      </p>
      <ErrorNote error={state.error} />
    </div>
  );
}

function Install({ onInstalled }: { onInstalled: () => void }) {
  const { client } = useDashboard();
  const [offer, setOffer] = useState<File>();
  const [bundled, setBundled] = useState<string>();
  const send: SendFile = async (file, onProgress) => {
    setBundled(undefined);
    if (await isRawWasm(file)) {
      // nothing is sent: the offer below asks first
      setOffer(file);
      return '';
    }
    setOffer(undefined);
    const { applicationId } = await client.applications.installBundle(file, { onProgress });
    onInstalled();
    return applicationId;
  };
  return (
    <Card title="Install an application">
      <FileUpload label="Signed bundle (.mpk), or a .wasm to bundle for development" accept=".mpk,.wasm" button="Install" busy="Installing…" waiting="Verifying the bundle on the node…" done="Installed application" send={send} />
      {offer ? (
        <DevBundleOffer
          key={offer.name + offer.size + offer.lastModified}
          file={offer}
          onCancel={() => setOffer(undefined)}
          onInstalled={(id) => {
            setOffer(undefined);
            setBundled(id);
            onInstalled();
          }}
        />
      ) : null}
      {bundled ? (
        <p class="alert ok" role="status">
          Bundled for development and installed application <Id value={bundled} keep={16} />
        </p>
      ) : null}
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
