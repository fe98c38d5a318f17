/**
 * Namespaces and groups: create a namespace for an application, open one to see its groups, and
 * for a group its members (add, remove, role) and capabilities (each member's, and the default
 * for new members).
 */
import { useState } from 'preact/hooks';
import { CAPABILITIES, invitationFromText, invitationToText, type GroupMember, type GroupRole, type SignedGroupOpenInvitation } from '../../../../src/client/index.ts';
import { useDashboard } from '../app-context.ts';
import { when } from '../format.ts';
import { Card, ConfirmButton, ErrorNote, Form, Id, Table, useAction, useLoad, valueOf } from '../ui.tsx';
import { appName } from './applications.tsx';

const ROLES: GroupRole[] = ['Admin', 'Member', 'ReadOnly'];
const CAPABILITY_NAMES = Object.entries(CAPABILITIES) as [string, number][];
const label = (name: string) => name.replace(/^CAN_/, '').toLowerCase().replace(/_/g, ' ');

/** The capability bits as checkboxes; `onSave` gets the new mask. */
function CapabilityEditor({ mask, onSave, busy, name }: { mask: number; onSave: (mask: number) => void; busy: boolean; name: string }) {
  const [value, setValue] = useState(mask);
  return (
    <Form class="stack" label={name} onSubmit={() => onSave(value)}>
      <div class="checks">
        {CAPABILITY_NAMES.map(([cap, bit]) => (
          <label class="check">
            <input type="checkbox" checked={(value & bit) !== 0} onChange={(e) => setValue(e.currentTarget.checked ? (value | bit) >>> 0 : value & ~bit)} />
            {label(cap)}
          </label>
        ))}
      </div>
      <div class="row">
        <button type="submit" disabled={busy || value === mask}>
          Save capabilities
        </button>
      </div>
    </Form>
  );
}

function Members({ groupId }: { groupId: string }) {
  const { client } = useDashboard();
  const members = useLoad(async (signal) => {
    const list = await client.groups.members(groupId, { signal });
    const caps = await Promise.all(list.map((m) => client.settings.memberCapabilities(groupId, m.identity, { signal }).catch(() => undefined)));
    return list.map((m, i) => ({ member: m, caps: caps[i] }));
  }, [groupId]);
  const [editing, setEditing] = useState<string>();
  const [identity, setIdentity] = useState('');
  const [role, setRole] = useState<GroupRole>('Member');
  const [add, adding] = useAction(async () => {
    await client.groups.addMembers(groupId, [{ identity: identity.trim(), role }]);
    setIdentity('');
    members.reload();
  });
  const [change, changing] = useAction(async (fn: () => Promise<unknown>) => {
    await fn();
    members.reload();
  });
  const rows = members.data ?? [];
  const edited = rows.find((r) => r.member.identity === editing);
  return (
    <div class="stack">
      <ErrorNote error={members.error ?? changing.error} />
      <Table
        label="members"
        rows={rows}
        rowKey={(r) => r.member.identity}
        empty={members.loading ? 'Loading…' : 'No members.'}
        columns={[
          { header: 'Account', cell: (r) => <Id value={r.member.identity} keep={16} /> },
          { header: 'Name', cell: (r: { member: GroupMember }) => r.member.name ?? <span class="muted">–</span> },
          {
            header: 'Role',
            cell: (r) => (
              <select
                aria-label={`role of ${r.member.identity}`}
                value={r.member.role}
                disabled={changing.busy}
                onChange={(e) => void change(() => client.groups.setMemberRole(groupId, r.member.identity, valueOf(e) as GroupRole))}
              >
                {[...new Set([...ROLES, r.member.role])].map((x) => (
                  <option value={x}>{x}</option>
                ))}
              </select>
            ),
          },
          {
            header: 'Capabilities',
            cell: (r) =>
              r.caps === undefined ? (
                '–'
              ) : (
                <button type="button" class="link" onClick={() => setEditing(editing === r.member.identity ? undefined : r.member.identity)}>
                  {CAPABILITY_NAMES.filter(([, bit]) => (r.caps! & bit) !== 0).length} of {CAPABILITY_NAMES.length}
                </button>
              ),
          },
          {
            header: '',
            cell: (r) => (
              <ConfirmButton question={`Remove ${r.member.identity} from this group?`} onConfirm={() => void change(() => client.groups.removeMembers(groupId, [r.member.identity]))} disabled={changing.busy}>
                Remove
              </ConfirmButton>
            ),
          },
        ]}
      />
      {edited && edited.caps !== undefined ? (
        <div class="panel">
          <h3>Capabilities of {edited.member.identity.slice(0, 12)}…</h3>
          <CapabilityEditor
            key={edited.member.identity}
            name="member capabilities"
            mask={edited.caps}
            busy={changing.busy}
            onSave={(mask) => void change(() => client.settings.setMemberCapabilities(groupId, edited.member.identity, mask))}
          />
        </div>
      ) : null}
      <Form class="row" label="add a member" onSubmit={add}>
        <input aria-label="account id" class="grow mono" value={identity} onInput={(e) => setIdentity(valueOf(e))} placeholder="account id (64 hex)" spellcheck={false} />
        <select aria-label="role" value={role} onChange={(e) => setRole(valueOf(e) as GroupRole)}>
          {ROLES.map((r) => (
            <option value={r}>{r}</option>
          ))}
        </select>
        <button type="submit" disabled={!identity.trim() || adding.busy}>
          Add member
        </button>
      </Form>
      <ErrorNote error={adding.error} />
    </div>
  );
}

/** The contexts registered in a group; one this node does not hold yet can be joined here. */
function GroupContexts({ groupId }: { groupId: string }) {
  const { client, events } = useDashboard();
  const data = useLoad(async (signal) => {
    const [registered, held] = await Promise.all([client.groups.contexts(groupId, { signal }), client.contexts.list({ signal })]);
    const holds = new Set(held.map((c) => c.id));
    return registered.map((c) => ({ id: c.contextId, held: holds.has(c.contextId) }));
  }, [groupId]);
  const [join, joining] = useAction(async (contextId: string) => {
    await client.contexts.join(contextId);
    events.watch({ contextIds: [contextId] });
    data.reload();
  });
  return (
    <>
      <ErrorNote error={data.error ?? joining.error} />
      <div class="row">
        <button type="button" onClick={data.reload}>
          Refresh contexts
        </button>
      </div>
      <Table
        label="group contexts"
        rows={data.data ?? []}
        rowKey={(c) => c.id}
        empty={data.loading ? 'Loading…' : 'No context is registered in this group.'}
        columns={[
          { header: 'Context', cell: (c) => <Id value={c.id} /> },
          {
            header: 'On this node',
            cell: (c) =>
              c.held ? (
                'joined'
              ) : (
                <button type="button" onClick={() => void join(c.id)} disabled={joining.busy}>
                  Join
                </button>
              ),
          },
        ]}
      />
    </>
  );
}

function Group({ groupId, title }: { groupId: string; title: string }) {
  const { client } = useDashboard();
  const info = useLoad((signal) => client.groups.info(groupId, { signal }), [groupId]);
  const [saveDefault, saving] = useAction(async (mask: number) => {
    await client.settings.setDefaultCapabilities(groupId, mask);
    info.reload();
  });
  return (
    <Card title={title} id="selected-group">
      <ErrorNote error={info.error ?? saving.error} />
      {info.data ? (
        <dl class="facts">
          <dt>Group</dt>
          <dd>
            <Id value={groupId} keep={24} />
          </dd>
          <dt>Members</dt>
          <dd>{info.data.memberCount}</dd>
          <dt>Contexts</dt>
          <dd>{info.data.contextCount}</dd>
          <dt>Subgroup visibility</dt>
          <dd>{info.data.subgroupVisibility}</dd>
        </dl>
      ) : null}
      <div class="panel">
        <h3>Contexts</h3>
        <GroupContexts groupId={groupId} />
      </div>
      <div class="panel">
        <h3>Members</h3>
        <Members groupId={groupId} />
      </div>
      {info.data ? (
        <div class="panel">
          <h3>Default capabilities of new members</h3>
          <CapabilityEditor key={`${groupId}-${info.data.defaultCapabilities}`} name="default capabilities" mask={Number(info.data.defaultCapabilities)} busy={saving.busy} onSave={(m) => void saveDefault(m)} />
        </div>
      ) : null}
    </Card>
  );
}

export function Groups() {
  const { client, events } = useDashboard();
  const data = useLoad(async (signal) => {
    const [namespaces, applications] = await Promise.all([client.namespaces.list({ signal }), client.applications.list({ signal })]);
    return { namespaces, apps: new Map(applications.map((a) => [a.id, a])), applications };
  });
  const [open, setOpen] = useState<string>();
  const [group, setGroup] = useState<string>();
  const [appId, setAppId] = useState('');
  const [name, setName] = useState('');
  const [subName, setSubName] = useState('');
  const subgroups = useLoad((signal) => (open ? client.namespaces.groups(open, { signal }) : Promise.resolve([])), [open]);
  const application = appId || data.data?.applications[0]?.id || '';
  const [create, creating] = useAction(async () => {
    const { namespaceId } = await client.namespaces.create({ applicationId: application, ...(name ? { name } : {}) });
    events.watch({ groupIds: [namespaceId] });
    setName('');
    setOpen(namespaceId);
    data.reload();
  });
  const [createSub, creatingSub] = useAction(async () => {
    const { groupId } = await client.namespaces.createGroup(open!, subName ? { groupName: subName } : {});
    setSubName('');
    setGroup(groupId);
    subgroups.reload();
  });
  const [invitation, setInvitation] = useState<{ namespaceId: string; text: string; expires: number }>();
  const [invite, inviting] = useAction(async (namespaceId: string) => {
    const { invitation: signed } = await client.invitations.inviteToNamespace(namespaceId);
    setInvitation({ namespaceId, text: invitationToText(signed), expires: Number(signed.invitation.expiration_timestamp) });
  });
  const [pasted, setPasted] = useState('');
  const [joined, setJoined] = useState<string>();
  const [join, joining] = useAction(async () => {
    const value = invitationFromText(pasted) as { invitation?: unknown; inviter_signature?: unknown };
    // the signed invitation itself, or the {invitation, groupName} answer
    const signed = (value.inviter_signature ? value : value.invitation) as SignedGroupOpenInvitation | undefined;
    const group = signed?.invitation?.group_id as unknown as number[] | undefined;
    if (!signed || !Array.isArray(group)) throw new Error('not a namespace invitation');
    const namespaceId = group.map((b) => b.toString(16).padStart(2, '0')).join('');
    await client.invitations.joinNamespace(namespaceId, signed);
    events.watch({ groupIds: [namespaceId] });
    setPasted('');
    setJoined(namespaceId);
    setOpen(namespaceId);
    data.reload();
  });
  const [remove, removing] = useAction(async (id: string) => {
    await client.namespaces.delete(id);
    if (open === id) setOpen(undefined);
    data.reload();
  });
  const namespaces = data.data?.namespaces ?? [];
  const shown = group ?? open;
  return (
    <div class="page">
      <h1>Namespaces and groups</h1>
      <Card title="Create a namespace">
        <Form class="row" label="create a namespace" onSubmit={create}>
          <select aria-label="application" value={application} onChange={(e) => setAppId(valueOf(e))}>
            {(data.data?.applications ?? []).map((a) => (
              <option value={a.id}>{appName(a)}</option>
            ))}
          </select>
          <input aria-label="namespace name" value={name} onInput={(e) => setName(valueOf(e))} placeholder="name (optional)" />
          <button type="submit" class="primary" disabled={!application || creating.busy}>
            Create namespace
          </button>
        </Form>
        <ErrorNote error={creating.error} />
      </Card>
      <Card title="Join a namespace">
        <Form class="stack" label="join a namespace" onSubmit={join}>
          <textarea
            aria-label="invitation"
            rows={3}
            class="mono"
            value={pasted}
            onInput={(e) => setPasted(valueOf(e))}
            placeholder="paste the inv1.… invitation made on another node (Invite, or hearth namespace invite)"
            spellcheck={false}
          />
          <div class="row">
            <button type="submit" class="primary" disabled={!pasted.trim() || joining.busy}>
              {joining.busy ? 'Joining…' : 'Join'}
            </button>
          </div>
        </Form>
        <ErrorNote error={joining.error} />
        {joined ? (
          <p class="alert ok" role="status">
            Joined namespace <Id value={joined} />
          </p>
        ) : null}
      </Card>
      <Card title="Namespaces" actions={<button type="button" onClick={data.reload}>Refresh</button>}>
        <ErrorNote error={data.error ?? removing.error} />
        <Table
          label="namespaces"
          rows={namespaces}
          rowKey={(n) => n.namespaceId}
          empty={data.loading ? 'Loading…' : 'No namespaces yet.'}
          columns={[
            { header: 'Name', cell: (n) => n.name ?? <span class="muted">–</span> },
            { header: 'Namespace', cell: (n) => <Id value={n.namespaceId} /> },
            { header: 'Application', cell: (n) => { const a = data.data?.apps.get(n.targetApplicationId); return a ? appName(a) : <Id value={n.targetApplicationId} />; } },
            { header: 'Members', cell: (n) => n.memberCount, class: 'num' },
            { header: 'Contexts', cell: (n) => n.contextCount, class: 'num' },
            { header: 'Created', cell: (n) => when(n.createdAt) },
            {
              header: '',
              cell: (n) => (
                <span class="row">
                  <button type="button" onClick={() => { setOpen(n.namespaceId); setGroup(undefined); }}>
                    Open
                  </button>
                  <button type="button" onClick={() => void invite(n.namespaceId)} disabled={inviting.busy}>
                    Invite
                  </button>
                  <ConfirmButton question={`Delete namespace ${n.name ?? n.namespaceId}? Its groups and contexts go with it.`} onConfirm={() => void remove(n.namespaceId)} disabled={removing.busy}>
                    Delete
                  </ConfirmButton>
                </span>
              ),
            },
          ]}
        />
      </Card>
      {invitation ? (
        <Card title="Invitation">
          <p class="muted">
            One line for the joining node's dashboard ("Join a namespace") or <code>hearth namespace join</code>. It is a credential: whoever holds it can join
            until {new Date(invitation.expires * 1000).toLocaleString()}.
          </p>
          <textarea aria-label="invitation to copy" readonly rows={3} class="mono" value={invitation.text} onFocus={(e) => (e.currentTarget as HTMLTextAreaElement).select()} />
          <div class="row">
            <button type="button" onClick={() => void navigator.clipboard?.writeText(invitation.text)}>
              Copy
            </button>
          </div>
        </Card>
      ) : null}
      <ErrorNote error={inviting.error} />
      {open ? (
        <Card title="Groups of the namespace">
          <ErrorNote error={subgroups.error ?? creatingSub.error} />
          <ul class="plain">
            <li>
              <button type="button" class={shown === open ? 'primary' : 'link'} onClick={() => setGroup(undefined)}>
                the namespace itself (root group)
              </button>
            </li>
            {(subgroups.data ?? []).map((g) => (
              <li>
                <button type="button" class={shown === g.groupId ? 'primary' : 'link'} onClick={() => setGroup(g.groupId)}>
                  {g.name ?? g.groupId.slice(0, 12) + '…'}
                </button>
              </li>
            ))}
          </ul>
          <Form class="row" label="create a subgroup" onSubmit={createSub}>
            <input aria-label="subgroup name" value={subName} onInput={(e) => setSubName(valueOf(e))} placeholder="subgroup name (optional)" />
            <button type="submit" disabled={creatingSub.busy}>
              Create subgroup
            </button>
          </Form>
        </Card>
      ) : null}
      {shown ? <Group key={shown} groupId={shown} title={shown === open ? 'Namespace (root group)' : 'Subgroup'} /> : null}
    </div>
  );
}

