import { connect } from "node:net";

/**
 * Sends one inline command to a redis-server on 127.0.0.1 without logging in and resolves with the first line of
 * its answer (`-NOAUTH Authentication required.`). node-redis cannot show this: its connect never finishes
 * against a server that wants a password.
 */
export function rawRedisAnswer(port: number, command: string, timeoutMs = 5_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: "127.0.0.1", port });
    let answer = "";
    socket.setTimeout(timeoutMs, () => {
      socket.destroy();
      reject(new Error(`redis on port ${port} did not answer ${command} within ${timeoutMs} ms`));
    });
    socket.once("error", reject);
    socket.once("connect", () => socket.write(`${command}\r\n`));
    socket.on("data", (chunk) => {
      answer += chunk.toString("utf8");
      const end = answer.indexOf("\r\n");
      if (end >= 0) {
        socket.destroy();
        resolve(answer.slice(0, end));
      }
    });
  });
}
