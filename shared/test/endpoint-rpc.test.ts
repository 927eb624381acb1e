/** serveEndpoints and callEndpoint over a real nats-server: subjects and queue groups from the endpoint table. */
import { CorralError, encode, subjects, UnauthorizedError, type VerifiedToken } from "@corral/contracts";
import { callEndpoint, serveEndpoints, silentLogger } from "@corral/shared";
import { testWithNats } from "../../test/helpers/nats-test.js";

const test = testWithNats("endpoint-rpc-test");

const claims: VerifiedToken = { userId: "u1", roles: ["user"], issuedAt: 1, expiresAt: 2, tokenId: "t1" };

test.serial("endpoint rpc - callEndpoint reaches the handler served for that endpoint and answers its reply or its error", async (t) => {
  const { nc } = t.context;
  const served = serveEndpoints({
    nc,
    service: "auth",
    log: silentLogger,
    handlers: {
      "auth.verify": ({ token }) => {
        if (token !== "good") throw new UnauthorizedError("bad token");
        return claims;
      },
    },
  });
  t.teardown(() => served.stop());
  await nc.flush();
  const reply = await callEndpoint(nc, "auth.verify", { token: "good" });
  t.deepEqual(reply, claims);
  const err = await t.throwsAsync(callEndpoint(nc, "auth.verify", { token: "bad" }), { instanceOf: CorralError });
  t.is(err?.status, 401);
});

test.serial("endpoint rpc - callEndpoint sends on the table's subject", async (t) => {
  const { nc } = t.context;
  const seen: string[] = [];
  const sub = nc.subscribe(subjects.clusters.purgeTenant, {
    callback: (_err, msg) => {
      seen.push(msg.subject);
      msg.respond(encode({ value: { done: true, removed: 0 } }));
    },
  });
  t.teardown(() => sub.unsubscribe());
  await nc.flush();
  t.deepEqual(await callEndpoint(nc, "clusters.purgeTenant", { tenant: "acme" }), { done: true, removed: 0 });
  t.deepEqual(seen, ["corral.clusters.purgeTenant"]);
});

test("endpoint rpc - a service must serve every endpoint of its own and none of another's", (t) => {
  const { nc } = t.context;
  const error = t.throws(() => serveEndpoints({ nc, service: "metrics", log: silentLogger, handlers: { "metrics.queues": () => ({}) } }));
  t.is(error?.message, "service metrics: no handler for metrics.nodeUsage, metrics.audit, metrics.purgeTenant");
  const foreign = t.throws(() =>
    serveEndpoints({
      nc,
      service: "auth",
      log: silentLogger,
      handlers: {
        "auth.verify": () => claims,
        // @ts-expect-error a handler of another service's endpoint is refused by the type too
        "clusters.list": () => [],
      },
    }),
  );
  t.is(foreign?.message, "service auth: handlers of endpoints it does not own: clusters.list");
});

test("endpoint rpc - a handler answering the wrong type does not type-check", (t) => {
  const handlers = {
    // @ts-expect-error the reply lacks the token's claims
    "auth.verify": () => ({ userId: "u1" }),
  } satisfies Parameters<typeof serveEndpoints<"auth">>[0]["handlers"];
  t.is(typeof handlers["auth.verify"], "function");
});
