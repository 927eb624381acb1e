import ssh2 from "ssh2";
import { fingerprint, matchesPinned, presentedHostKey, type HostKeys, type PresentedHostKey } from "./host-keys.js";
import { address, hostKeyAlgorithms } from "./pool.js";

/** Where a probe goes and which host keys the machine must present. */
export interface SshProbeTarget {
  host: string;
  port: number;
  hostKeys: HostKeys;
}

/** What a probe found: the machine answered with a pinned key, or why not (a sentence without a secret). */
export type SshProbeResult =
  | { ok: true }
  | { ok: false; kind: "connect" | "timeout" | "host-key" | "aborted"; message: string };

/**
 * Whether a machine answers SSH as the one whose keys were pinned: a TCP connection, the server's greeting and the
 * key exchange with one of the pinned host keys, then hang up. No login, so it needs no credential and leaves no
 * session in the machine's logs beyond a closed connection. Bounded by `timeoutMs` and `signal`; never throws.
 */
export function probeSsh(target: SshProbeTarget, options: { timeoutMs: number; signal?: AbortSignal }): Promise<SshProbeResult> {
  const where = address(target);
  const pinned = target.hostKeys;
  return new Promise<SshProbeResult>((resolve) => {
    const client = new ssh2.Client();
    let presented: PresentedHostKey | undefined;
    let settled = false;
    const settle = (result: SshProbeResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
      client.end();
      resolve(result);
    };
    const onAbort = () => settle({ ok: false, kind: "aborted", message: `ssh: the check of ${where} was aborted` });
    const timer = setTimeout(
      () => settle({ ok: false, kind: "timeout", message: `ssh: ${where} did not complete an SSH handshake within ${options.timeoutMs} ms` }),
      options.timeoutMs,
    );
    if (options.signal?.aborted) return onAbort();
    options.signal?.addEventListener("abort", onAbort, { once: true });
    client.once("handshake", () => settle({ ok: true }));
    client.on("error", (err: Error & { code?: string }) => {
      if (presented && !matchesPinned(pinned, presented)) {
        const expected = Object.entries(pinned)
          .map(([type, key]) => `${type} ${fingerprint(key)}`)
          .join(", ");
        return settle({
          ok: false,
          kind: "host-key",
          message: `ssh: ${where} presented host key ${presented.type} ${fingerprint(presented.key)}, not the pinned ${expected}: another machine answers there`,
        });
      }
      settle({ ok: false, kind: "connect", message: `ssh: ${where} does not answer: ${err.code ? `${err.code} ` : ""}${err.message}` });
    });
    client.once("close", () => settle({ ok: false, kind: "connect", message: `ssh: ${where} closed the connection before the SSH handshake` }));
    try {
      client.connect({
        host: target.host,
        port: target.port,
        // Never used: the probe hangs up once the key exchange is done, before any login.
        username: "corral-health-probe",
        readyTimeout: options.timeoutMs,
        tryKeyboard: false,
        authHandler: [],
        hostVerifier: (blob: Buffer) => {
          presented = presentedHostKey(blob);
          return matchesPinned(pinned, presented);
        },
        algorithms: { serverHostKey: hostKeyAlgorithms(Object.keys(pinned)) as never },
      });
    } catch (err) {
      settle({ ok: false, kind: "connect", message: `ssh: ${where}: ${(err as Error).message}` });
    }
  });
}
