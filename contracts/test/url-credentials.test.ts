import test from "ava";
import { redactUrls, splitServerList, withUrlCredentials } from "../src/url-credentials.js";

test("url credentials - go into every URL of a server list, which then reads back as one login", (t) => {
  const urls = withUrlCredentials("nats://127.0.0.1:4222, nats://127.0.0.1:4223,nats://127.0.0.1:4224", { user: "svc", password: "p@ss:word" });
  t.is(urls, "nats://svc:p%40ss%3Aword@127.0.0.1:4222,nats://svc:p%40ss%3Aword@127.0.0.1:4223,nats://svc:p%40ss%3Aword@127.0.0.1:4224");
  t.deepEqual(splitServerList(urls), {
    servers: ["nats://127.0.0.1:4222", "nats://127.0.0.1:4223", "nats://127.0.0.1:4224"],
    credentials: { user: "svc", password: "p@ss:word" },
  });
  t.false(redactUrls(urls).includes("p%40ss"), "no password survives redaction");
});
