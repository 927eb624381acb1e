import { hostKeysFromPublicKeyLines, type HostKeys } from "@corral/provisioner/sdk";

export const BEGIN_HOST_KEYS = "-----BEGIN SSH HOST KEY KEYS-----";
export const END_HOST_KEYS = "-----END SSH HOST KEY KEYS-----";

/**
 * The SSH host keys cloud-init printed on the instance's console, between `-----BEGIN SSH HOST KEY KEYS-----` and
 * `-----END SSH HOST KEY KEYS-----` (the last complete block: a reboot prints another), as pinned keys: algorithm
 * -> base64 blob. A line whose blob does not name its own algorithm is skipped. Undefined when there is no
 * complete block with a key.
 */
export function consoleHostKeys(output: string): HostKeys | undefined {
  const end = output.lastIndexOf(END_HOST_KEYS);
  if (end < 0) return undefined;
  const begin = output.lastIndexOf(BEGIN_HOST_KEYS, end);
  if (begin < 0) return undefined;
  return hostKeysFromPublicKeyLines(output.slice(begin + BEGIN_HOST_KEYS.length, end).replace(/\r/g, ""));
}
