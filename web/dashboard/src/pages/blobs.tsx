/** Blobs: upload a file (with progress), list what the node holds, download, delete. */
import { useDashboard } from '../app-context.ts';
import { size } from '../format.ts';
import { Card, ConfirmButton, ErrorNote, FileUpload, Id, Table, useAction, useLoad, type SendFile } from '../ui.tsx';

export function Blobs() {
  const { client } = useDashboard();
  const blobs = useLoad((signal) => client.blobs.list({ signal }));
  const send: SendFile = async (file, onProgress) => {
    const { blob_id } = await client.blobs.upload(file, { onProgress });
    blobs.reload();
    return blob_id;
  };
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
        <FileUpload formLabel="upload a blob" label="File" button="Upload" busy="Uploading…" done="Uploaded: blob" send={send} />
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
