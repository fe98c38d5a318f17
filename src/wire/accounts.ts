/** NodeIdentity (admin spec "NodeIdentity"): which account a node acts as, and its keys. Imports nothing: see ./index.ts. */
export interface NodeIdentityView {
  accountId: string;
  deviceId: string | null;
  /** the node's signing key */
  publicKey: string;
  accountRootPublicKey?: string;
  holdsAccountRoot: boolean;
  deviceCertified?: boolean;
  deviceAgreementKey?: string | null;
  accountNamespaceId?: string | null;
}
