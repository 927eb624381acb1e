import anyTest, { type TestFn } from "ava";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "redis";
import { eventually } from "../helpers/eventually.js";
import { startSystem, type TestSystem } from "../helpers/system.js";
import { requestToken } from "../helpers/tokens.js";

/**
 * Failed-login throttling (Redis): 3 failures of one user, or 8 from one address, within 2 s -> 429.
 * Serial: every request comes from 127.0.0.1, so the address counter is shared by all tests here.
 */
const test = anyTest as TestFn<{ sys: TestSystem; dir: string; tokenUrl: string }>;
const WINDOW_SECONDS = 2;

test.before(async (t) => {
  t.context.dir = await mkdtemp(join(tmpdir(), "corral-throttle-test-"));
  const realmfile = join(t.context.dir, "realm.properties");
  const users = ["u1", "u2", "u3", "u4", "v1", "v2", "v3", "v4", "v5"];
  await writeFile(realmfile, users.map((u) => `${u}: ${u}pw`).join("\n"));
  t.context.sys = await startSystem({
    security: {
      config: {
        "security.authentication.basic.realmfile": realmfile,
        "security.login.maxFailuresPerUser": 3,
        "security.login.maxFailuresPerAddress": 8,
        "security.login.failureWindowSeconds": WINDOW_SECONDS,
      },
    },
  });
  t.context.tokenUrl = t.context.sys.tokenUrl!;
});
test.after.always(async (t) => {
  await t.context.sys?.stop();
  if (t.context.dir) await rm(t.context.dir, { recursive: true, force: true });
});

/** Waits until every failure counter has expired, so each test starts clean (they share the address). */
test.afterEach.always(async (t) => {
  const redis = createClient({ url: t.context.sys.redis!.url });
  await redis.connect();
  try {
    await eventually(async () => (await redis.keys("corral:auth:failures:*")).length === 0, {
      what: "the failure windows ended",
      timeoutMs: (WINDOW_SECONDS + 2) * 1000,
      intervalMs: 100,
    });
  } finally {
    await redis.close();
  }
});

test.serial("throttle - after 3 failed logins of a user, even the right password is 429 with Retry-After", async (t) => {
  const { tokenUrl } = t.context;
  for (let i = 0; i < 3; i++) t.is((await requestToken(tokenUrl, "u1", "wrong")).status, 401);
  const blocked = await requestToken(tokenUrl, "u1", "u1pw");
  t.is(blocked.status, 429, blocked.text);
  t.is(blocked.body.error, "too_many_requests");
  const retryAfter = Number(blocked.headers.get("retry-after"));
  t.true(retryAfter >= 1 && retryAfter <= WINDOW_SECONDS, `Retry-After ${retryAfter}`);
  t.is((await requestToken(tokenUrl, "u2", "u2pw")).status, 200, "other users are not affected");
  const after = await eventually(
    async () => {
      const r = await requestToken(tokenUrl, "u1", "u1pw");
      return r.status === 200 ? r : false;
    },
    { what: "u1 may log in again after the window", timeoutMs: (WINDOW_SECONDS + 2) * 1000, intervalMs: 250 },
  );
  t.is(after.body.token_type, "Bearer");
});

test.serial("throttle - a successful login clears the user's failures", async (t) => {
  const { tokenUrl } = t.context;
  for (let round = 0; round < 2; round++) {
    for (let i = 0; i < 2; i++) t.is((await requestToken(tokenUrl, "u3", "wrong")).status, 401);
    t.is((await requestToken(tokenUrl, "u3", "u3pw")).status, 200, `round ${round}`);
  }
});

test.serial("throttle - failures spread over many users from one address block that address", async (t) => {
  const { tokenUrl } = t.context;
  for (let i = 0; i < 8; i++) t.is((await requestToken(tokenUrl, `v${(i % 4) + 1}`, "wrong")).status, 401);
  const blocked = await requestToken(tokenUrl, "u4", "u4pw");
  t.is(blocked.status, 429, "a user without failures, from the blocked address");
  t.truthy(blocked.headers.get("retry-after"));
});

test.serial("throttle - unknown user names count too", async (t) => {
  const { tokenUrl } = t.context;
  for (let i = 0; i < 3; i++) t.is((await requestToken(tokenUrl, "ghost", "x")).status, 401);
  t.is((await requestToken(tokenUrl, "ghost", "x")).status, 429);
});
