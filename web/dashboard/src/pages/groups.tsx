/**
 * Namespaces and groups: create a namespace for an application, join one with a pasted invitation,
 * open one to see its groups, and for a group its members (add, remove, role) and capabilities
 * (each member's, and the default for new members), an invitation to copy as one string, and the
 * group's contexts (held here or not, joinable). Members and contexts are read again every few
 * seconds while open, so a join or a removal made on another node shows up by itself.
 */
import { useEffect, useState } from 'preact/hooks';
import { CAPABILITIES, type GroupMember, type GroupRole, type SignedGroupOpenInvitation } from '../../../../src/client/index.ts';
import { useDashboard } from '../app-context.ts';
import { BASE, follow } from '../router.ts';
import { when } from '../format.ts';
import { decodeInvitation, encodeInvitation } from '../invitation.ts';
import { useNames } from '../names.ts';
import { Card, ConfirmButton, ErrorNote, Field, Form, Id, Table, useAction, useLoad, valueOf } from '../ui.tsx';
import { appName } from './applications.tsx';

/** how often an open group's members and contexts are read again */
const REFRESH_MS = 3_000;

/** Reloads every few seconds while mounted. */
function useEvery(reload: () => void, ms = REFRESH_MS): void {
  useEffect(() => {
    const timer = setInterval(reload, ms);
    return () => clearInterval(timer);
  }, [reload, ms]);
}

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
  useEvery(members.reload);
  const self = useLoad((signal) => client.accounts.identity({ signal }));
  const selfAccount = self.data?.accountId;
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
          {
            header: 'Name',
            cell: (r: { member: GroupMember }) => (
              <span>
                {r.member.name ?? (r.member.identity === selfAccount ? null : <span class="muted">–</span>)}
                {r.member.identity === selfAccount ? <span class="badge">this node</span> : null}
              </span>
            ),
          },
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

const ROLE_NAMES = ['Admin', 'Member', 'ReadOnly'];

/** Creates an invitation to the group and shows it as one string to copy (invitation.ts). */
function Invite({ groupId }: { groupId: string }) {
  const { client } = useDashboard();
  const [hours, setHours] = useState('24');
  const [made, setMade] = useState<{ text: string; expiresAt: number; role: number; invitation: SignedGroupOpenInvitation; revoked?: boolean }>();
  const [copied, setCopied] = useState(false);
  // revoking writes an op in the namespace's log: every member node refuses the invitation from then on
  const [revoke, revoking] = useAction(async () => {
    if (!made) return;
    await client.invitations.revoke(groupId, { invitation: made.invitation });
    setMade({ ...made, revoked: true });
  });
  const [invite, inviting] = useAction(async () => {
    const secs = Math.round(Number(hours) * 3600);
    if (!Number.isFinite(secs) || secs <= 0 || secs > 86_400) throw new Error('an invitation is valid for 1 minute to 24 hours');
    const { invitation } = await client.invitations.inviteToGroup(groupId, { expirationTimestamp: secs });
    const text = encodeInvitation(invitation);
    setCopied(false);
    setMade({ ...decodeInvitation(text), text });
  });
  const copy = () =>
    made &&
    navigator.clipboard?.writeText(made.text).then(
      () => setCopied(true),
      () => undefined,
    );
  return (
    <div class="stack">
      <Form class="row" label="create an invitation" onSubmit={invite}>
        <label class="check">
          valid for
          <select aria-label="valid for" value={hours} onChange={(e) => setHours(valueOf(e))}>
            <option value="1">1 hour</option>
            <option value="8">8 hours</option>
            <option value="24">24 hours</option>
          </select>
        </label>
        <button type="submit" disabled={inviting.busy}>
          {inviting.busy ? 'Creating…' : 'Create invitation'}
        </button>
      </Form>
      <ErrorNote error={inviting.error} />
      {made ? (
        <div class="stack" data-testid="invitation">
          <textarea aria-label="invitation" class="mono" rows={3} readOnly value={made.text} onFocus={(e) => e.currentTarget.select()} />
          <div class="row">
            <button type="button" class="primary" disabled={made.revoked} onClick={() => void copy()}>
              {copied ? 'Copied' : 'Copy invitation'}
            </button>
            <ConfirmButton question="Revoke this invitation? Every member node will refuse it, also if it was already handed out." disabled={made.revoked || revoking.busy} onConfirm={() => void revoke()}>
              {made.revoked ? 'Revoked' : revoking.busy ? 'Revoking…' : 'Revoke invitation'}
            </ConfirmButton>
            <span class="muted">
              joins as {ROLE_NAMES[made.role] ?? `role ${made.role}`}, valid until {when(made.expiresAt)}
            </span>
          </div>
          <ErrorNote error={revoking.error} />
          {made.revoked ? (
            <p class="alert note" role="status">
              Revoked: every member node refuses this invitation now (an op in the namespace's log). Create a new one to invite someone.
            </p>
          ) : (
            <p class="alert note">
              This string is a credential: whoever has it can join until it expires, once (an invitation admits one account), unless it is revoked. Paste it on the other
              node's dashboard (Namespaces &amp; groups, <em>Join a namespace</em>) or give it to <code>hearth namespace join</code>.
            </p>
          )}
        </div>
      ) : null}
    </div>
  );
}

/** The group's contexts: held on this node or not (then a Join button), read again every few seconds. */
function GroupContexts({ groupId }: { groupId: string }) {
  const { client, events } = useDashboard();
  const list = useLoad(async (signal) => {
    const [entries, held] = await Promise.all([client.groups.contexts(groupId, { signal }), client.contexts.list({ signal })]);
    const heldIds = new Set(held.map((c) => c.id));
    return entries.map((e) => ({ ...e, held: heldIds.has(e.contextId) }));
  }, [groupId]);
  useEvery(list.reload);
  const names = useNames((list.data ?? []).filter((c) => c.held).map((c) => c.contextId));
  const [join, joining] = useAction(async (contextId: string) => {
    await client.contexts.join(contextId);
    events.watch({ contextIds: [contextId] });
    list.reload();
  });
  return (
    <div class="stack">
      <ErrorNote error={list.error ?? joining.error} />
      <Table
        label="group contexts"
        rows={list.data ?? []}
        rowKey={(c) => c.contextId}
        empty={list.loading ? 'Loading…' : 'No context in this group yet.'}
        columns={[
          { header: 'Name', cell: (c) => names.get(c.contextId) ?? c.name ?? <span class="muted">–</span> },
          { header: 'Context', cell: (c) => <Id value={c.contextId} /> },
          {
            header: 'On this node',
            cell: (c) =>
              c.held ? (
                <a href={`${BASE}/contexts?context=${c.contextId}`} onClick={follow(`contexts?context=${c.contextId}`)}>
                  held: open
                </a>
              ) : (
                <button type="button" onClick={() => void join(c.contextId)} disabled={joining.busy} aria-label={`join ${c.name ?? c.contextId}`}>
                  Join
                </button>
              ),
          },
        ]}
      />
      <p class="muted">A member follows the contexts of its groups by itself (auto-follow); Join takes one now.</p>
    </div>
  );
}

/** Joins a namespace with a pasted invitation (the one-line string, or the JSON object). */
function Join({ onJoined }: { onJoined: (namespaceId: string) => void }) {
  const { client, events } = useDashboard();
  const [pasted, setPasted] = useState('');
  const [joined, setJoined] = useState<{ groupId: string; memberAccount: string }>();
  let preview: string | undefined;
  let problem: string | undefined;
  if (pasted.trim()) {
    try {
      const d = decodeInvitation(pasted);
      preview = `namespace ${d.namespaceId.slice(0, 12)}…, as ${ROLE_NAMES[d.role] ?? `role ${d.role}`}, valid until ${when(d.expiresAt)}${d.expiresAt * 1000 < Date.now() ? ' (expired)' : ''}`;
    } catch (err) {
      problem = (err as Error).message;
    }
  }
  const [join, joining] = useAction(async () => {
    const { invitation } = decodeInvitation(pasted);
    const r = await client.invitations.joinGroup(invitation);
    events.watch({ groupIds: [r.groupId] });
    setJoined(r);
    setPasted('');
    onJoined(r.groupId);
  });
  return (
    <Card title="Join a namespace">
      <Form class="stack" label="join a namespace" onSubmit={join}>
        <Field label="Invitation" hint="the one-line string from the inviting node's dashboard or `hearth namespace invite`, or its JSON">
          <textarea rows={3} class="mono" value={pasted} onInput={(e) => setPasted(valueOf(e))} spellcheck={false} />
        </Field>
        {preview ? <p class="muted" data-testid="invitation-preview">Invites to {preview}</p> : null}
        {problem ? <p class="alert error" role="alert">{problem}</p> : null}
        <div class="row">
          <button type="submit" class="primary" disabled={!preview || joining.busy}>
            {joining.busy ? 'Joining…' : 'Join'}
          </button>
        </div>
      </Form>
      <ErrorNote error={joining.error} />
      {joined ? (
        <p class="alert ok" role="status">
          Joined namespace <Id value={joined.groupId} /> as account <Id value={joined.memberAccount} />. Its contexts are listed below as this node follows them.
        </p>
      ) : null}
    </Card>
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
        <h3>Members</h3>
        <Members groupId={groupId} />
      </div>
      <div class="panel">
        <h3>Invite a node</h3>
        <Invite groupId={groupId} />
      </div>
      <div class="panel">
        <h3>Contexts of the group</h3>
        <GroupContexts groupId={groupId} />
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
        {data.data && data.data.applications.length === 0 ? (
          <p class="muted" data-testid="no-applications">A namespace runs an application, and none is installed on this node yet: install one on the <a href={`${BASE}/applications`} onClick={follow('applications')}>Applications</a> page first.</p>
        ) : null}
        <Form class="row" label="create a namespace" onSubmit={create}>
          <label>
            Application{' '}
            <select aria-label="Application" value={application} disabled={!data.data?.applications.length} onChange={(e) => setAppId(valueOf(e))}>
              {(data.data?.applications ?? []).length === 0 ? <option value="">(none installed)</option> : null}
              {(data.data?.applications ?? []).map((a) => (
                <option value={a.id}>{appName(a)}</option>
              ))}
            </select>
          </label>
          <input aria-label="namespace name" value={name} onInput={(e) => setName(valueOf(e))} placeholder="name (optional)" />
          <button type="submit" class="primary" disabled={!application || creating.busy}>
            Create namespace
          </button>
        </Form>
        <ErrorNote error={creating.error} />
      </Card>
      <Join
        onJoined={(id) => {
          setOpen(id);
          setGroup(undefined);
          data.reload();
        }}
      />
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
                  <ConfirmButton question={`Delete namespace ${n.name ?? n.namespaceId}? Its groups and contexts go with it.`} onConfirm={() => void remove(n.namespaceId)} disabled={removing.busy}>
                    Delete
                  </ConfirmButton>
                </span>
              ),
            },
          ]}
        />
      </Card>
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

