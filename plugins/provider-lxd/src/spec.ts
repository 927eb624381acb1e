import type { PluginField, PluginSpec } from "@corral/provisioner/sdk";

export const LXD_PROVIDER_TYPE = "lxd";

const field = (label: string, tip: string, extra: Partial<PluginField> = {}): PluginField => ({ label, type: "text", override: false, tip, ...extra });

/**
 * The `lxd` provider's fields. A hardware type's `flavor` is `<cpus>x<memory>` (the docker provider's format), an
 * image type's `image` an LXD image alias or fingerprint on the LXD server (default corral/node-bookworm, built by
 * `npm run lxd-image`). With no field set, the provider uses the local LXD's socket, project `default` and profile
 * `default`.
 */
export const LXD_SPEC: PluginSpec = {
  name: LXD_PROVIDER_TYPE,
  description: "LXD system containers (or VMs) as nodes, reached over SSH (image corral/node-bookworm, npm run lxd-image)",
  parameters: {
    admin: {
      fields: {
        socket_path: field(
          "LXD socket",
          "Unix socket of the local LXD (default: LXD_SOCKET, else $LXD_DIR/unix.socket, else the snap's or Debian's socket, whichever exists)",
        ),
        url: field("HTTPS address", "https://host:8443 of a remote LXD, reached with the client certificate below instead of the socket"),
        client_cert: field("Client certificate", "PEM certificate the remote LXD trusts (lxc config trust add)"),
        client_key: field("Client key", "PEM private key of the client certificate", { type: "password", sensitive: true }),
        server_cert: field("Server certificate", "PEM certificate of the remote LXD, when it is self-signed (default: the system's CAs verify it)"),
        project: field("Project", "LXD project of the instances (default: default)"),
        profiles: field("Profiles", "Comma-separated profiles of every instance (default: default)"),
        network: field("Network", "Managed network of the instances' eth0 (default: the profiles' NIC)"),
        storage_pool: field("Storage pool", "Pool of the instances' root disk (default: the profiles' root disk)"),
        instance_type: field("Instance type", "container (system container) or virtual-machine (needs hardware virtualization)", {
          options: ["container", "virtual-machine"],
          default: "container",
        }),
        ssh_user: field("SSH user", "User the cluster key logs in as, with passwordless sudo when not root (default: the image type's sshuser, else root)"),
        key_delivery: field(
          "SSH key delivery",
          "cloud-init: the cluster key in the instance's cloud-init user-data; file: pushed into root's authorized_keys through LXD's file API before the first start (images without cloud-init)",
          { options: ["cloud-init", "file"], default: "cloud-init" },
        ),
      },
      required: [],
    },
    user: { fields: {}, required: [] },
  },
};
