import { createHash } from "node:crypto";
import ssh2, { type Client, type ClientChannel, type ConnectConfig } from "ssh2";
import type { Logger } from "@corral/shared";
import { hostKeyMismatchMessage, matchesPinned, presentedHostKey, type HostKeys, type PresentedHostKey } from "./host-keys.js";

/** Where and as whom to connect. */
export interface SshTarget {
  host: string;
  port: number;
  username: string;
  /** OpenSSH or PEM private key. */
  privateKey?: string;
  password?: string;
  /**
   * Pinned host keys (from CONFIRM). Without them the connection learns the presented key instead: only CONFIRM
   * does that, and `SshPool.learnHostKey` is the only way to ask for it.
   */
  hostKeys?: HostKeys;
}

export type SshErrorKind = "connect" | "auth" | "host-key" | "lost" | "aborted";

/** A failure to reach or keep a node, with a message meant for the node's action history. */
export class SshError extends Error {
  override readonly name = "SshError";
  constructor(
    message: string,
    readonly kind: SshErrorKind,
    /** The socket's error code of a failed connect (`ECONNREFUSED`, `EHOSTUNREACH`, ...), when there was one. */
    readonly code?: string,
  ) {
    super(message);
  }
}

/** A connection handed out for one user; `release` gives it back for reuse. */
export interface SshLease {
  readonly client: Client;
  readonly address: string;
  /** Whether the connection is still up. */
  readonly isOpen: boolean;
  /**
   * Opens an exec channel on the leased connection. `attach` runs synchronously when the channel opens: a quick
   * command's exit status may arrive in the same read as the open confirmation, before any later listener.
   */
  exec(command: string, attach: (channel: ClientChannel) => void): Promise<void>;
  release(): void;
}

export interface SshPoolOptions {
  log: Logger;
  /** Most connections open at once over the whole provisioner; more callers wait. @default 256 */
  maxConnections?: number;
  /** Channels at once on one connection (sshd's MaxSessions is 10 by default). @default 8 */
  maxChannelsPerConnection?: number;
  /** An unused connection is closed after this long, ms. @default 30000 */
  idleMs?: number;
  /** Connect and authenticate within this long, ms. @default 20000 */
  connectTimeoutMs?: number;
  /** Keepalive interval, ms: a dead peer is noticed after three missed answers. @default 5000 */
  keepaliveMs?: number;
}

interface PooledConnection {
  key: string;
  address: string;
  client: Client;
  /** Leases out now (counted while connecting too). */
  leases: number;
  lastUsed: number;
  isOpen: boolean;
  ready: Promise<void>;
}

/** Server host key algorithms that present a key of a pinned type. */
export function hostKeyAlgorithms(types: string[]): string[] {
  return types.flatMap((t) => (t === "ssh-rsa" ? ["rsa-sha2-512", "rsa-sha2-256", "ssh-rsa"] : [t]));
}

const secretHash = (target: SshTarget) =>
  createHash("sha256")
    .update(target.privateKey ?? "")
    .update("\0")
    .update(target.password ?? "")
    .digest("base64url");

/**
 * SSH connections of one provisioner: reused across the actions of a task and the tasks of a node (one pool key
 * per address, user, credential and pinned keys), several channels per connection, at most `maxConnections`
 * open at once (callers beyond it wait; idle connections of other nodes are closed to make room), idle ones
 * closed after `idleMs`. Host keys are checked on every connection against the pinned ones; nothing is accepted
 * blindly.
 */
export class SshPool {
  private readonly byKey = new Map<string, PooledConnection[]>();
  private total = 0;
  private waiters: Array<() => void> = [];
  private readonly sweeper: NodeJS.Timeout;
  private isClosed = false;
  private readonly opts: Required<Omit<SshPoolOptions, "log">>;

  constructor(private readonly options: SshPoolOptions) {
    this.opts = {
      maxConnections: options.maxConnections ?? 256,
      maxChannelsPerConnection: options.maxChannelsPerConnection ?? 8,
      idleMs: options.idleMs ?? 30_000,
      connectTimeoutMs: options.connectTimeoutMs ?? 20_000,
      keepaliveMs: options.keepaliveMs ?? 5_000,
    };
    this.sweeper = setInterval(() => this.closeIdle(this.opts.idleMs), Math.min(this.opts.idleMs, 5_000));
    this.sweeper.unref();
  }

  /** Connections open or opening, and leases out. */
  stats(): { connections: number; leases: number } {
    let leases = 0;
    for (const list of this.byKey.values()) for (const c of list) leases += c.leases;
    return { connections: this.total, leases };
  }

  /** A lease on a connection to `target`, whose host key must match the pinned ones. */
  async acquire(target: SshTarget, signal: AbortSignal): Promise<SshLease> {
    if (!target.hostKeys || Object.keys(target.hostKeys).length === 0) {
      throw new SshError(
        `ssh: no host key is pinned for ${address(target)}; CONFIRM records it, and nothing is accepted without it`,
        "host-key",
      );
    }
    const key = poolKey(target);
    for (;;) {
      if (signal.aborted) throw new SshError("ssh: aborted", "aborted");
      if (this.isClosed) throw new SshError("ssh: the connection pool is closed", "aborted");
      const reusable = this.byKey.get(key)?.find((c) => c.isOpen && c.leases < this.opts.maxChannelsPerConnection);
      const conn = reusable ?? (this.hasRoom() ? this.open(key, target) : undefined);
      if (conn) {
        conn.leases++;
        try {
          await conn.ready;
        } catch (err) {
          conn.leases--;
          throw err;
        }
        return this.lease(conn);
      }
      await this.waitForRoom(signal);
    }
  }

  /**
   * Connects without a pinned key and returns the key the host presented (CONFIRM: trust on first use, then
   * pinned). Authenticates too, so a wrong key or password fails here, not at the first action. The connection
   * stays in the pool, pinned to that key, so the node's next task (BOOTSTRAP) needs no handshake of its own.
   */
  async learnHostKey(target: SshTarget, signal: AbortSignal): Promise<PresentedHostKey> {
    let presented: PresentedHostKey | undefined;
    const client = new ssh2.Client();
    await this.connectClient(client, target, signal, (blob) => {
      presented = presentedHostKey(blob);
      return true;
    });
    if (!presented) {
      client.end();
      throw new SshError(`ssh: ${address(target)} presented no host key`, "host-key");
    }
    this.adopt(client, { ...target, hostKeys: { [presented.type]: presented.key } });
    return presented;
  }

  /** Closes every connection; later acquires fail. */
  async close(): Promise<void> {
    this.isClosed = true;
    clearInterval(this.sweeper);
    for (const list of this.byKey.values()) for (const c of list) c.client.end();
    this.wake();
  }

  private hasRoom(): boolean {
    if (this.total < this.opts.maxConnections) return true;
    // Full: make room by closing the longest-idle connection of any node.
    let idlest: PooledConnection | undefined;
    for (const list of this.byKey.values()) {
      for (const c of list) if (c.isOpen && c.leases === 0 && (!idlest || c.lastUsed < idlest.lastUsed)) idlest = c;
    }
    if (!idlest) return false;
    this.forget(idlest);
    idlest.client.end();
    return this.total < this.opts.maxConnections;
  }

  /** Counts a connection in and files it under its key; it is forgotten when it closes. */
  private register(key: string, target: SshTarget, client: Client): PooledConnection {
    const conn: PooledConnection = {
      key,
      address: address(target),
      client,
      leases: 0,
      lastUsed: Date.now(),
      isOpen: true,
      ready: Promise.resolve(),
    };
    this.total++;
    const list = this.byKey.get(key) ?? [];
    list.push(conn);
    this.byKey.set(key, list);
    client.on("close", () => this.forget(conn));
    return conn;
  }

  /** Keeps a connection made and verified outside `acquire` for later acquires of `target`, when there is room. */
  private adopt(client: Client, target: SshTarget): void {
    if (this.isClosed || !this.hasRoom()) {
      client.end();
      return;
    }
    this.register(poolKey(target), target, client);
    this.wake();
  }

  private open(key: string, target: SshTarget): PooledConnection {
    const client = new ssh2.Client();
    const pinned = target.hostKeys!;
    let mismatch: PresentedHostKey | undefined;
    const conn = this.register(key, target, client);
    conn.ready = this.connectClient(
      client,
      target,
      undefined,
      (blob) => {
        const presented = presentedHostKey(blob);
        if (matchesPinned(pinned, presented)) return true;
        mismatch = presented;
        return false;
      },
      hostKeyAlgorithms(Object.keys(pinned)),
    ).catch((err: unknown) => {
      this.forget(conn);
      if (mismatch) throw new SshError(hostKeyMismatchMessage(conn.address, pinned, mismatch), "host-key");
      throw err;
    });
    conn.ready.catch(() => undefined);
    return conn;
  }

  private lease(conn: PooledConnection): SshLease {
    let released = false;
    return {
      client: conn.client,
      address: conn.address,
      get isOpen() {
        return conn.isOpen;
      },
      exec: (command, attach) =>
        new Promise<void>((resolve, reject) => {
          if (!conn.isOpen) return reject(new SshError(`ssh: the connection to ${conn.address} was lost`, "lost"));
          conn.client.exec(command, (err, channel) => {
            if (err) return reject(new SshError(`ssh: ${conn.address}: ${err.message}`, "lost"));
            attach(channel);
            resolve();
          });
        }),
      release: () => {
        if (released) return;
        released = true;
        conn.leases--;
        conn.lastUsed = Date.now();
        this.wake();
      },
    };
  }

  private connectClient(
    client: Client,
    target: SshTarget,
    signal: AbortSignal | undefined,
    verify: (blob: Buffer) => boolean,
    serverHostKey?: string[],
  ): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const where = address(target);
      let settled = false;
      const fail = (err: SshError) => {
        if (settled) return;
        settled = true;
        signal?.removeEventListener("abort", onAbort);
        client.end();
        reject(err);
      };
      const onAbort = () => fail(new SshError(`ssh: connecting to ${where} was aborted`, "aborted"));
      signal?.addEventListener("abort", onAbort, { once: true });
      client.once("ready", () => {
        if (settled) return;
        settled = true;
        signal?.removeEventListener("abort", onAbort);
        resolve();
      });
      client.on("error", (err: Error & { level?: string }) => fail(classify(err, where, target)));
      client.once("close", () => fail(new SshError(`ssh: ${where} closed the connection before it was ready`, "connect")));
      const config: ConnectConfig = {
        host: target.host,
        port: target.port,
        username: target.username,
        readyTimeout: this.opts.connectTimeoutMs,
        keepaliveInterval: this.opts.keepaliveMs,
        keepaliveCountMax: 3,
        tryKeyboard: false,
        // Only the methods we have: ssh2 would try "none" first, a round trip every server refuses.
        authHandler: [...(target.privateKey !== undefined ? ["publickey" as const] : []), ...(target.password !== undefined ? ["password" as const] : [])],
        hostVerifier: (key: Buffer) => verify(key),
        ...(target.privateKey !== undefined ? { privateKey: target.privateKey } : {}),
        ...(target.password !== undefined ? { password: target.password } : {}),
        ...(serverHostKey ? { algorithms: { serverHostKey: serverHostKey as never } } : {}),
      };
      try {
        client.connect(config);
        // SSH's messages are small and come in bursts (channel open, exec request, data, EOF): with Nagle's
        // algorithm each burst's second write waits for the node's delayed ACK, about 40 ms on Linux.
        client.setNoDelay(true);
      } catch (err) {
        fail(new SshError(`ssh: ${where}: ${(err as Error).message}`, "auth"));
      }
    });
  }

  private forget(conn: PooledConnection): void {
    if (!conn.isOpen) return;
    conn.isOpen = false;
    this.total--;
    const list = this.byKey.get(conn.key);
    if (list) {
      const rest = list.filter((c) => c !== conn);
      if (rest.length) this.byKey.set(conn.key, rest);
      else this.byKey.delete(conn.key);
    }
    this.wake();
  }

  private closeIdle(idleMs: number): void {
    const cutoff = Date.now() - idleMs;
    for (const list of [...this.byKey.values()]) {
      for (const c of list) {
        if (c.leases === 0 && c.lastUsed <= cutoff) {
          this.forget(c);
          c.client.end();
        }
      }
    }
  }

  private waitForRoom(signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        signal.removeEventListener("abort", done);
        resolve();
      };
      this.waiters.push(done);
      signal.addEventListener("abort", done, { once: true });
    });
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }
}

/** One pool key per address, user, credential and set of pinned keys (in any order). */
function poolKey(target: SshTarget): string {
  const pinned = Object.entries(target.hostKeys ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `${address(target)}|${target.username}|${secretHash(target)}|${JSON.stringify(pinned)}`;
}

export function address(target: Pick<SshTarget, "host" | "port">): string {
  return target.host.includes(":") ? `[${target.host}]:${target.port}` : `${target.host}:${target.port}`;
}

function classify(err: Error & { level?: string; code?: string }, where: string, target: SshTarget): SshError {
  if (err.level === "client-authentication") {
    const how = target.privateKey ? "key" : target.password ? "password" : "no credentials";
    return new SshError(`ssh: ${where} refused the login of ${target.username} (${how}): ${err.message}`, "auth");
  }
  if (err.level === "client-timeout") return new SshError(`ssh: ${where} did not answer within the connect timeout`, "connect");
  if (/privateKey|Cannot parse/i.test(err.message)) return new SshError(`ssh: the private key for ${where} cannot be used: ${err.message}`, "auth");
  return new SshError(`ssh: cannot connect to ${where}: ${err.code ? `${err.code} ` : ""}${err.message}`, "connect", err.code);
}
