import type { PluginField, PluginSpec } from "@corral/contracts";

const textField = (label: string, tip: string): PluginField => ({ label, type: "text", override: false, tip });

export const DOCKER_SPEC: PluginSpec = {
  name: "docker",
  description: "Containers on a Docker host as nodes, reached over SSH (image corral/node:bookworm)",
  parameters: {
    admin: {
      fields: {
        socket_path: textField(
          "Docker socket",
          "Unix socket of the Docker daemon (default: DOCKER_HOST when it is unix://..., else /var/run/docker.sock)",
        ),
        network: textField("Network", "User-defined bridge network of the nodes, created when missing (default corral)"),
        ssh_user: textField("SSH user", "User the node image lets in with the cluster key (default root)"),
      },
      required: [],
    },
    user: { fields: {}, required: [] },
  },
};
