/** Keys: root keys (who may log in) and client keys (scoped tokens, this dashboard's included), revoke. */
import { useState } from 'preact/hooks';
import { useDashboard } from '../app-context.ts';
import { when } from '../format.ts';
import { Card, ConfirmButton, ErrorNote, Id, Table, useAction, useLoad } from '../ui.tsx';

export function Keys() {
  const { client, session } = useDashboard();
  const [all, setAll] = useState(false);
  const keys = useLoad(async (signal) => {
    const [roots, clients] = await Promise.all([client.auth.listRootKeys({ signal }), client.auth.listClientKeysWithDetails({ signal })]);
    return { roots, clients };
  });
  const [revoke, revoking] = useAction(async (fn: () => Promise<unknown>) => {
    await fn();
    // when the revoked key was this session's, this reload is refused and the login page says why
    keys.reload();
  });
  const mine = session.keyId();
  const clients = (keys.data?.clients ?? []).filter((k) => all || k.is_valid);
  return (
    <div class="page">
      <h1>Keys</h1>
      <ErrorNote error={keys.error ?? revoking.error} />
      <Card title="Root keys" actions={<button type="button" onClick={keys.reload}>Refresh</button>}>
        <p class="muted">Accounts that may log in to this node.</p>
        <Table
          label="root keys"
          rows={keys.data?.roots ?? []}
          rowKey={(k) => k.key_id}
          empty={keys.loading ? 'Loading…' : 'No root keys.'}
          columns={[
            { header: 'Account', cell: (k) => <strong>{k.public_key}</strong> },
            { header: 'Key', cell: (k) => <Id value={k.key_id} /> },
            { header: 'Method', cell: (k) => k.auth_method },
            { header: 'Permissions', cell: (k) => k.permissions.join(', ') },
            { header: 'Created', cell: (k) => when(k.created_at) },
            { header: 'Revoked', cell: (k) => when(k.revoked_at) },
            {
              header: '',
              cell: (k) =>
                k.revoked_at ? null : (
                  <ConfirmButton question={`Revoke root key ${k.public_key}? Its tokens stop working.`} onConfirm={() =>
                      void revoke(async () => {
                        const result = await client.auth.deleteRootKey(k.key_id);
                        // the node keeps its last admin key: hearth answers 409 (thrown), a reference node 200 with status false
                        if ('status' in result && !result.status) throw new Error(result.message);
                      })
                    } disabled={revoking.busy}>
                    Revoke
                  </ConfirmButton>
                ),
            },
          ]}
        />
      </Card>
      <Card
        title="Client keys"
        actions={
          <label class="check">
            <input type="checkbox" checked={all} onChange={(e) => setAll(e.currentTarget.checked)} /> show revoked and expired
          </label>
        }
      >
        <p class="muted">Scoped credentials handed to applications, scripts and this dashboard.</p>
        <Table
          label="client keys"
          rows={clients}
          rowKey={(k) => k.client_id}
          empty={keys.loading ? 'Loading…' : 'No client keys.'}
          columns={[
            {
              header: 'Name',
              cell: (k) => (
                <span>
                  {k.name}
                  {k.client_id === mine ? <span class="badge">this session</span> : null}
                </span>
              ),
            },
            { header: 'Client', cell: (k) => <Id value={k.client_id} /> },
            { header: 'Permissions', cell: (k) => k.permissions.join(', ') },
            { header: 'Expires', cell: (k) => when(k.expires_at) },
            { header: 'Valid', cell: (k) => (k.is_valid ? 'yes' : 'no') },
            {
              header: '',
              cell: (k) =>
                k.is_valid ? (
                  <ConfirmButton
                    question={k.client_id === mine ? 'Revoke the key of this session? You will have to sign in again.' : `Revoke client key ${k.name}? Its tokens stop working.`}
                    onConfirm={() => void revoke(() => client.auth.deleteClientKey(k.root_key_id, k.client_id))}
                    disabled={revoking.busy}
                  >
                    Revoke
                  </ConfirmButton>
                ) : null,
            },
          ]}
        />
      </Card>
    </div>
  );
}
