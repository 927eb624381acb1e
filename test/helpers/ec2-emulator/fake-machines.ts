/**
 * Machines that are not there, for tests of the emulator's API and of a provider's CREATE, DELETE and failures,
 * without Docker: an instance "runs" at an address of TEST-NET-1 (unreachable) with a host key made up for it.
 */
import { generateSshKeyPair } from "@corral/provisioner/testing";
import type { Machines } from "./machines.js";

export function fakeMachines(): Machines & { started: number } {
  let next = 10;
  const keys = new Map<string, string>();
  return {
    started: 0,
    async start(spec) {
      this.started++;
      const containerId = `fake-${spec.instanceId}`;
      keys.set(containerId, `${generateSshKeyPair().publicKey}\n`);
      const octet = next++;
      return { containerId, privateIp: `192.0.2.${octet}`, ...(spec.withPublicAddress ? { publicIp: `198.51.100.${octet}` } : {}) };
    },
    async hostKeyLines(containerId) {
      return keys.get(containerId) ?? "";
    },
    async remove(containerId) {
      keys.delete(containerId);
    },
    async close() {
      keys.clear();
    },
  };
}
