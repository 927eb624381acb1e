/**
 * openKvView (src/balancer/kv-view.ts) on a real nats-server: a first watch that cannot be opened yet (its stream
 * is not there, as on a NATS cluster right after the bucket was created elsewhere) is tried again until it is.
 */
import { jetstreamManager } from "@nats-io/jetstream";
import { encode } from "@corral/contracts";
import { openBucket, silentLogger } from "@corral/shared";
import { openKvView } from "../src/balancer/kv-view.js";
import { testWithNats } from "../../../test/helpers/nats-test.js";

const test = testWithNats("tenancy-kv-view-test");

test("a view whose bucket's stream appears only after the open is retried until it loads; past its deadline the open fails", async (t) => {
  const kv = await openBucket(t.context.nc, "view_late");
  const jsm = await jetstreamManager(t.context.nc);
  await jsm.streams.delete("KV_view_late");
  const opening = openKvView<{ n: number }>(kv, { log: silentLogger, name: "late" });
  await new Promise((resolve) => setTimeout(resolve, 600));
  const again = await openBucket(t.context.nc, "view_late");
  await again.put("a", encode({ n: 1 }));
  const view = await opening;
  t.teardown(() => view.stop());
  await view.ready();
  t.deepEqual([...view.entries()].map(([k, e]) => [k, e.value]), [["a", { n: 1 }]]);

  await jsm.streams.delete("KV_view_late");
  await t.throwsAsync(openKvView(kv, { log: silentLogger, name: "gone", firstWatchTimeoutMs: 500 }));
});
