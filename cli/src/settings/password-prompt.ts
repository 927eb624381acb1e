/** Asks for a password on the terminal without echoing it. */
import type { ReadStream } from "node:tty";

export function promptPassword(stdin: ReadStream, stderr: NodeJS.WritableStream, prompt: string): Promise<string> {
  stderr.write(prompt);
  stdin.setRawMode(true);
  stdin.resume();
  stdin.setEncoding("utf8");
  let password = "";
  return new Promise((resolve, reject) => {
    const done = (error?: Error) => {
      stdin.setRawMode(false);
      stdin.pause();
      stdin.off("data", onData);
      stderr.write("\n");
      if (error) reject(error);
      else resolve(password);
    };
    const onData = (chunk: string) => {
      for (const c of chunk) {
        if (c === "\r" || c === "\n") return done();
        if (c === "\u0003") return done(new Error("interrupted"));
        if (c === "\u007f" || c === "\b") password = password.slice(0, -1);
        else password += c;
      }
    };
    stdin.on("data", onData);
  });
}
