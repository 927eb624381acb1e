/**
 * The cloud-init user-data of a node: the cluster's public key for the SSH user (root: no default user is made and
 * root's key carries no "login as ..." prefix; another user: made with passwordless sudo). JSON is YAML, so the
 * document is the `#cloud-config` header and one JSON object: no quoting rules of our own.
 */
export function userData(sshUser: string, publicKey: string): string {
  const key = publicKey.trim();
  const config =
    sshUser === "root"
      ? { disable_root: false, users: [], ssh_authorized_keys: [key] }
      : {
          users: [
            {
              name: sshUser,
              shell: "/bin/bash",
              sudo: "ALL=(ALL) NOPASSWD:ALL",
              lock_passwd: true,
              ssh_authorized_keys: [key],
            },
          ],
        };
  return `#cloud-config\n${JSON.stringify(config, null, 1)}\n`;
}

/** The instance config key LXD hands to cloud-init as user-data (read by both LXD's and the NoCloud datasource). */
export const USER_DATA_KEY = "user.user-data";
