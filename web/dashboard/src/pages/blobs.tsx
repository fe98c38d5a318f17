/** Blobs: upload a file (with progress), list what the node holds, download, delete. */
import { useState } from 'preact/hooks';
import { useDashboard } from '../app-context.ts';
import { size } from '../format.ts';
import { Card, ConfirmButton, ErrorNote, Id, ProgressBar, Table, useAction, useLoad } from '../ui.tsx';

export function Blobs() {
  const { client } = useDashboard();
  const blobs = useLoad((signal) => client.blobs.list({ signal }));
  const [file, setFile] = useState<File>();
  const [progress, setProgress] = useState<{ loaded: number; total: number }>();
  const [uploaded, setUploaded] = useState<string>();
  const [upload, uploading] = useAction(async () => {
    if (!file) throw new Error('choose a file first');
    setUploaded(undefined);
    setProgress({ loaded: 0, total: file.size });
    const result = await client.blobs.upload(file, { onProgress: (loaded, total) => setProgress({ loaded, total: total ?? file.size }) });
    setUploaded(result.blob_id);
    blobs.reload();
  });
  const [download, downloading] = useAction(async (id: string) => {
    const bytes = await client.blobs.bytes(id);
    const url = URL.createObjectURL(new Blob([bytes as BlobPart]));
    const a = document.createElement('a');
    a.href = url;
    a.download = `blob-${id.slice(0, 12)}`;
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
  });
  const [remove, removing] = useAction(async (id: string) => {
    await client.blobs.delete(id);
    blobs.reload();
  });
  return (
    <div class="page">
      <h1>Blobs</h1>
      <Card title="Upload a blob">
        <form
          class="row"
          aria-label="upload a blob"
          onSubmit={(e) => {
            e.preventDefault();
            void upload();
          }}
        >
          <label class="field grow">
            <span>File</span>
            <input type="file" onChange={(e) => setFile(e.currentTarget.files?.[0])} />
          </label>
          <button type="submit" class="primary" disabled={!file || uploading.busy}>
            {uploading.busy ? 'Uploading…' : 'Upload'}
          </button>
        </form>
        {progress && (uploading.busy || uploaded) ? <ProgressBar value={progress.loaded} max={progress.total} label="upload" /> : null}
        {uploaded ? (
          <p class="alert ok" role="status">
            Uploaded: blob <Id value={uploaded} keep={16} />
          </p>
        ) : null}
        <ErrorNote error={uploading.error} />
      </Card>
      <Card title="Blobs on this node" actions={<button type="button" onClick={blobs.reload}>Refresh</button>}>
        <ErrorNote error={blobs.error ?? downloading.error ?? removing.error} />
        <Table
          label="blobs"
          rows={blobs.data ?? []}
          rowKey={(b) => b.blob_id}
          empty={blobs.loading ? 'Loading…' : 'No blobs.'}
          columns={[
            { header: 'Blob', cell: (b) => <Id value={b.blob_id} keep={16} /> },
            { header: 'Size', cell: (b) => size(b.size), class: 'num' },
            {
              header: '',
              cell: (b) => (
                <span class="row">
                  <button type="button" onClick={() => void download(b.blob_id)} disabled={downloading.busy}>
                    Download
                  </button>
                  <ConfirmButton question={`Delete blob ${b.blob_id}?`} onConfirm={() => void remove(b.blob_id)} disabled={removing.busy}>
                    Delete
                  </ConfirmButton>
                </span>
              ),
            },
          ]}
        />
      </Card>
    </div>
  );
}
