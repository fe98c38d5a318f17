/**
 * The step catalogue of merobox workflows (merobox master, `commands/bootstrap/config.py`: its
 * `VALID_STEP_TYPES` and one strict model per step type) as `hearth workflow run` reads them: each
 * type's keys, which of them are required, and whether hearth runs the type. A key that no step of
 * that type reads is refused before any node starts, as merobox refuses it ("the step would ignore
 * it"); a type merobox knows but hearth does not run is refused with that reason, never skipped.
 * docs/workflows.md is this table in prose.
 */

/** Keys every step may carry (merobox `BaseStepConfig`). */
export const BASE_KEYS = ['name', 'type', 'outputs', 'description', 'expected_failure', 'expected_error', 'token'] as const;

export interface StepSpec {
  /** required keys (`a|b` = one of them) */
  required: string[];
  /** optional keys besides the base ones */
  optional: string[];
  /** why hearth does not run this type; absent = supported */
  unsupported?: string;
  /** the key holding a node name, when the step acts on one node */
  nodeKey?: 'node' | 'context_node';
}

const DOCKER = 'acts on Docker containers or their network; hearth runs local processes';
const TEE = 'needs TEE hardware attestation';

/** `spec('node ctx', 'opt1 opt2')`: required and optional keys as space-separated words. */
function spec(required: string, optional = '', unsupported?: string): StepSpec {
  const req = required.split(' ').filter(Boolean);
  return { required: req, optional: optional.split(' ').filter(Boolean), unsupported, nodeKey: req.includes('node') ? 'node' : undefined };
}

const NS = 'namespace_id|group_id';

export const STEPS: Record<string, StepSpec> = {
  install_application: spec('node path|url', 'dev'),
  create_context: spec('node application_id group_id', 'params service_name'),
  create_identity: spec('node'),
  create_namespace: spec('node application_id', 'app_key'),
  create_group: spec('node application_id', 'app_key'),
  create_namespace_invitation: spec(`node ${NS}`, 'recursive'),
  create_group_invitation: spec(`node ${NS}`, 'recursive'),
  invite: spec(`node ${NS}`, 'recursive'),
  invite_open: spec(`node ${NS}`, 'recursive'),
  invite_identity: spec(`node ${NS}`, 'recursive'),
  join_namespace: spec(`node ${NS} invitation`),
  join_group: spec(`node ${NS} invitation`),
  join: spec(`node ${NS} invitation`),
  join_open: spec(`node ${NS} invitation`),
  join_context: spec('node context_id'),
  join_subgroup_inheritance: spec('node group_id'),
  leave_context: spec('node context_id'),
  leave_group: spec('node group_id'),
  leave_namespace: spec('node namespace_id'),
  list_namespaces: spec('node'),
  create_group_in_namespace: spec('node namespace_id', 'group_name visibility'),
  list_namespace_groups: spec('node namespace_id'),
  reparent_group: spec('node child_group_id new_parent_id'),
  list_subgroups: spec('node group_id'),
  add_group_members: spec('node group_id members'),
  remove_group_members: spec('node group_id members'),
  list_group_members: spec('node group_id'),
  list_group_contexts: spec('node group_id'),
  update_member_role: spec('node group_id member_id role'),
  set_member_capabilities: spec('node group_id member_id capabilities'),
  get_member_capabilities: spec('node group_id member_id'),
  set_member_auto_follow: spec('node group_id member_id auto_follow_contexts auto_follow_subgroups', 'requester'),
  set_default_capabilities: spec('node group_id capabilities'),
  set_subgroup_visibility: spec('node group_id visibility'),
  set_default_visibility: spec('node group_id visibility'),
  get_group_info: spec('node group_id'),
  delete_group: spec('node group_id', 'requester'),
  delete_namespace: spec('node namespace_id', 'requester'),
  delete_context: spec('node context_id', 'requester'),
  uninstall_application: spec('node application_id'),
  set_group_metadata: spec('node group_id', 'record_name data'),
  get_group_metadata: spec('node group_id'),
  set_member_metadata: spec('node group_id member_id', 'record_name data'),
  get_member_metadata: spec('node group_id member_id'),
  set_context_metadata: spec('node group_id context_id', 'record_name data'),
  get_context_metadata: spec('node group_id context_id'),
  detach_context_from_group: spec('node group_id context_id'),
  sync_group: spec('node group_id'),
  register_group_signing_key: spec('node group_id signing_key'),
  upgrade_group: spec('node group_id target_application_id', 'cascade'),
  cascade_namespace_application: spec('node namespace_id target_application_id'),
  get_group_upgrade_status: spec('node group_id'),
  retry_group_upgrade: spec('node group_id'),
  get_cascade_status: spec('node namespace_id'),
  get_migration_status: spec('node namespace_id'),
  abort_migration: spec('node namespace_id'),
  assert_cascade_complete: spec('node namespace_id', 'timeout_seconds poll_interval'),
  assert_migration_complete: spec('node namespace_id', 'timeout_seconds poll_interval'),
  resync_context: spec('node context_id', 'force'),
  list_application_versions: spec('node application_id'),
  get_application: spec('node application_id'),
  call: spec('node context_id method', 'args exec_type executor_public_key state_retry_attempts state_retry_delay unauthenticated'),
  wait: spec('seconds', 'message'),
  wait_for_sync: spec('nodes context_id|group_id', 'timeout retry_attempts check_interval initial_check_interval backoff_factor trigger_sync expect'),
  repeat: spec('count steps'),
  parallel: spec('groups', 'mode failure_mode'),
  script: spec('script', 'target args'),
  assert: spec('statements', 'non_blocking'),
  json_assert: spec('statements'),
  upload_blob: spec('node file_path', 'context_id'),
  download_blob: spec('node blob_id', 'context_id output_path expected_size expected_sha256'),
  delete_blob: spec('node blob_id', 'missing_ok'),
  node_identity: spec('node'),

  // merobox types hearth does not run: refused before any node starts
  account_create: spec('node namespace_id', '', 'account enrolment steps are not wired to hearth nodes yet'),
  account_pair: spec('node holder namespace_id root_key nonce', '', 'account enrolment steps are not wired to hearth nodes yet'),
  account_revoke: spec('node namespace_id device_id', 'proof', 'account enrolment steps are not wired to hearth nodes yet'),
  sign_warrant: spec('context_id executor method device_secret credential', 'args nonce valid_for', 'delegated-execution warrants are not wired yet'),
  perform_intent: spec('node context_id method warrant author_proof', 'args', 'delegated-execution warrants are not wired yet'),
  node_exec: spec('node args', 'files capture allow_running expected_failure image data_dir', 'runs merod subcommands inside a container'),
  pause_container: spec('container', '', DOCKER),
  unpause_container: spec('container', '', DOCKER),
  restart_container: spec('container', 'wait_healthy timeout', DOCKER),
  disconnect_node: spec('node', 'network', DOCKER),
  connect_node: spec('node', 'network', DOCKER),
  partition_peers: spec('node peers', '', DOCKER),
  heal_peers: spec('node peers', '', DOCKER),
  inject_network_fault: spec('container fault duration', 'percent ms interface', DOCKER),
  assert_log_absent: spec('nodes patterns', 'regex tail_lines case_sensitive', 'reads merod log lines; hearth logs differ'),
  assert_log_present: spec('nodes patterns', 'regex tail_lines case_sensitive min_matches', 'reads merod log lines; hearth logs differ'),
  get_proposal: spec('node context_id proposal_id', '', 'proposals belong to the NEAR chain flow hearth does not have'),
  list_proposals: spec('node context_id', 'args', 'proposals belong to the NEAR chain flow hearth does not have'),
  get_proposal_approvers: spec('node context_id proposal_id', '', 'proposals belong to the NEAR chain flow hearth does not have'),
  delete_blob_on_disk: spec('node blob_id', 'data_dir blobs_subdir missing_ok', 'deletes files inside a container'),
  create_mesh: spec('context_node application_id nodes', 'params', 'not wired yet: write the create_context, invitation and join steps'),
  fuzzy_test: spec('duration_minutes context_id nodes operations', 'summary_interval_seconds operation_delay_ms success_threshold', 'load testing is not wired yet'),
  stop_node: spec('node', '', 'not wired yet'),
  start_node: spec('node', '', 'not wired yet'),
  set_tee_admission_policy: spec('node group_id', '', TEE),
  tee_fleet_join: spec('node', '', TEE),
  assert_tee_member: spec('node', '', TEE),
  assert_not_member: spec('node', '', TEE),
  login: spec('node username password', 'bootstrap_secret', 'the runner logs in itself with its own admin credentials'),
  refresh: spec('node', '', 'the runner manages its own tokens'),
  ws_connect: spec('node', 'unauthenticated message timeout', 'WebSocket steps are not wired yet'),
  ws_subscribe: spec('node', 'unauthenticated message timeout', 'WebSocket steps are not wired yet'),
  assert_ws_event: spec('node group_id event', 'match absent count timeout_seconds', 'WebSocket steps are not wired yet'),
  assert_api_response: spec('node path', 'match present absent', 'not wired yet'),
};

/** Top-level keys merobox reads; the container-only ones are ignored with one line. */
export const TOP_LEVEL_KEYS = new Set([
  'name', 'description', 'nodes', 'remote_nodes', 'steps', 'nuke_on_start', 'nuke_on_end', 'fail_on_panic', 'stop_all_nodes', 'restart',
  'wait_timeout', 'force_pull_image', 'auth_service', 'auth_image', 'auth_use_cached', 'webui_use_cached', 'auth_mode', 'log_level',
  'rust_backtrace', 'e2e_mode', 'bootstrap_nodes', 'preserve_default_bootstrap', 'topology', 'near_devnet', 'contracts_dir', 'variables',
]);

/** Top-level keys that configure containers, chains or merod itself: no meaning for local hearth processes. */
export const IGNORED_TOP_LEVEL = ['nuke_on_start', 'nuke_on_end', 'fail_on_panic', 'force_pull_image', 'auth_service', 'auth_image', 'auth_use_cached', 'webui_use_cached', 'auth_mode', 'log_level', 'rust_backtrace', 'e2e_mode', 'bootstrap_nodes', 'preserve_default_bootstrap', 'near_devnet', 'contracts_dir'];

/** `nodes:` keys that configure containers or merod: ignored with one line. */
export const IGNORED_NODE_KEYS = ['image', 'chain_id', 'base_port', 'base_rpc_port', 'config_path', 'use_image_entrypoint', 'mdns', 'network_admin', 'init_args'];

export function allowedKeys(s: StepSpec): Set<string> {
  return new Set([...BASE_KEYS, ...s.required.flatMap((k) => k.split('|')), ...s.optional]);
}
