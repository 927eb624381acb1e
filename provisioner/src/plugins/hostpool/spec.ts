import type { PluginSpec } from "@corral/contracts";
import { HOSTPOOL_PROVIDER_TYPE } from "@corral/shared";

export const HOSTPOOL_SPEC: PluginSpec = {
  name: HOSTPOOL_PROVIDER_TYPE,
  description: "Machines that already exist: each node gets a free host of the provider's list, reached over SSH",
  resourceTypes: { ssh_keys: { format: "file", permissions: "0400" } },
  parameters: {
    admin: {
      fields: {
        hosts: {
          label: "Hosts",
          type: "text",
          override: false,
          tip: "Comma-separated [user@]address[:port] (IPv6 as [address]:port); each host serves one node at a time",
        },
        ssh_key_resource: {
          label: "SSH key resource",
          type: "text",
          override: false,
          tip: "Name of an ssh_keys resource uploaded for provider type hostpool and synced (the private key)",
        },
        ssh_password: {
          label: "SSH password",
          type: "password",
          override: false,
          sensitive: true,
          tip: "The login password, when no SSH key resource is given",
        },
        cleanup: {
          label: "Cleanup command",
          type: "text",
          override: false,
          tip: "Run as root on the host when its node is deleted; a failure quarantines the host",
        },
      },
      required: [
        ["hosts", "ssh_key_resource"],
        ["hosts", "ssh_password"],
      ],
    },
    user: { fields: {}, required: [] },
  },
};
