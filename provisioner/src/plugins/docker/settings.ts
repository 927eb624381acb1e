import type { Json, JsonObject } from "@corral/contracts";

/** Where a provider's containers go, from its admin fields. */
export interface DockerSettings {
  socketPath: string;
  network: string;
  sshUser: string;
}

export const DEFAULT_NETWORK = "corral";
export const DEFAULT_SSH_USER = "root";

/** `DOCKER_HOST` when it names a unix socket, else Docker's default socket. */
export function defaultSocketPath(env: NodeJS.ProcessEnv = process.env): string {
  const host = env["DOCKER_HOST"] ?? "";
  return host.startsWith("unix://") && host.length > "unix://".length ? host.slice("unix://".length) : "/var/run/docker.sock";
}

export function dockerSettings(fields: JsonObject, defaultSocket: string): DockerSettings {
  return {
    socketPath: text(fields["socket_path"]) || defaultSocket,
    network: text(fields["network"]) || DEFAULT_NETWORK,
    sshUser: text(fields["ssh_user"]) || DEFAULT_SSH_USER,
  };
}

const text = (value: Json | undefined) => (typeof value === "string" ? value.trim() : "");
