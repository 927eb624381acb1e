import test from "ava";
import { buckets, kvStream } from "@corral/contracts";
import { connectNats, createValue, openBucket, silentLogger } from "@corral/shared";
import { eventually } from "../../../test/helpers/eventually.js";
import { startNatsCluster } from "../../../test/helpers/nats-cluster.js";
import { openSigningKeys } from "../src/adapters/signing-keys.js";
import { newSecret } from "../src/domain/token.js";

test("signing keys - on a three-node cluster a key is read from the stream leader, so one just added on another node is found at once", async (t) => {
  const cluster = await startNatsCluster({ nodes: 3 });
  const writer = await connectNats({ url: cluster.urls[0]!, name: "signing-keys-writer" });
  const reader = await connectNats({ url: cluster.urls[cluster.urls.length - 1]!, name: "signing-keys-reader" });
  try {
    const stream = kvStream(buckets.authKeys);
    // Listeners on the get subjects see each such request: the leader's, and direct gets (any replica answers
    // those, a lagging one with the keys from before the last rotation).
    let leaderGets = 0;
    let directGets = 0;
    writer.subscribe(`$JS.API.STREAM.MSG.GET.${stream}`, { callback: () => void leaderGets++ });
    writer.subscribe(`$JS.API.DIRECT.GET.${stream}`, { callback: () => void directGets++ });
    writer.subscribe(`$JS.API.DIRECT.GET.${stream}.>`, { callback: () => void directGets++ });
    await writer.flush();

    const keys = await openSigningKeys({ nc: reader, log: silentLogger, ensureKey: true });
    t.truthy(keys.secretOf("k1"), "the first key, read at start");
    t.is(await keys.lookup("k5"), undefined, "an unknown key id");

    const secret = newSecret();
    t.truthy(await createValue(await openBucket(writer, buckets.authKeys), "k2", { secret, createdAtMs: Date.now() }));
    t.deepEqual(await keys.lookup("k2"), Buffer.from(secret), "a key added on another node, looked up right after");
    t.is(keys.current()?.id, "k2");

    await writer.flush();
    await eventually(() => leaderGets >= 2, { what: `leader gets for the start and the lookups (${leaderGets} seen)` });
    t.is(directGets, 0, "no direct gets");
    keys.stop();
  } finally {
    await reader.close();
    await writer.close();
    await cluster.stop();
  }
});
