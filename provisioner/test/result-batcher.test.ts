/**
 * The provisioner's result batcher (src/result-batcher.ts) and the lookup of stored results (shared
 * result-messages.ts) on a real nats-server: successes of one plan handed over together are one stored message,
 * failures and lone successes stay plain results on their own subjects, and every result is found afterwards.
 */
import { jetstreamManager } from "@nats-io/jetstream";
import { resultBatchSubject, streams, TaskName, type TaskResult } from "@corral/contracts";
import { ensureStreams, resultsOf, storedResults } from "@corral/shared";
import { createResultBatcher } from "../src/result-batcher.js";
import { createResultLookup } from "../src/result-lookup.js";
import { testWithNats } from "../../test/helpers/nats-test.js";

const test = testWithNats("result-batcher-test", (nc) => ensureStreams(nc));

const result = (planId: string, index: number, status = 0, tenant = "acme"): TaskResult => ({
  tenant,
  clusterId: planId.split("-")[0] ?? "",
  planId,
  taskId: `${planId}-${String(index).padStart(3, "0")}`,
  dispatch: 1,
  taskName: TaskName.Bootstrap,
  nodeId: "n",
  provisionerId: "p",
  workerId: `w${index}`,
  status,
  ...(status === 0 ? {} : { stderr: "it broke" }),
  startTime: 1,
  endTime: 2,
});

test("result batcher - successes of one plan ending together are one message; failures and lone successes are their own", async (t) => {
  const { nc } = t.context;
  const jsm = await jetstreamManager(nc);
  const stored = async () => {
    const { subjects } = (await jsm.streams.info(streams.results, { subjects_filter: "corral.results.acme.>" })).state;
    return Object.values(subjects ?? {}).reduce((a, b) => a + b, 0);
  };
  const before = await stored();
  const batcher = createResultBatcher(nc);
  const together = [1, 2, 3].map((i) => result("c1-001", i));
  const failed = result("c1-001", 4, 1);
  const alone = result("c2-001", 1);
  await Promise.all([...together, failed, alone].map((r) => batcher.publish(r)));

  t.is((await stored()) - before, 3, "one batch, the failure, the other plan's success");
  const batch = await jsm.streams.getMessage(streams.results, { last_by_subj: resultBatchSubject("acme", "c1-001") });
  t.deepEqual(
    resultsOf(batch!.data).map((r) => r.taskId),
    together.map((r) => r.taskId),
  );
  const lookup = createResultLookup(async () => jsm);
  for (const r of [...together, failed, alone]) t.true(await lookup.hasResult(r), `${r.taskId} is found`);
  t.false(await lookup.hasResult({ ...together[0]!, dispatch: 2 }), "another dispatch of a batched task is not");
  t.false(await lookup.hasResult({ ...alone, taskId: "c2-001-009" }));

  // The same batch again is dropped by its message id; a batch made up differently is stored, and both copies count.
  await Promise.all(together.map((r) => batcher.publish(r)));
  t.is((await storedResults(jsm, together[0]!)).length, 1);
  await Promise.all([together[0]!, together[1]!].map((r) => batcher.publish(r)));
  t.is((await storedResults(jsm, together[0]!)).length, 2);
  t.is((await storedResults(jsm, together[2]!)).length, 1);
});

test("result lookup - a plan's batches are read once, each check going on from where the last stopped", async (t) => {
  const { nc } = t.context;
  const jsm = await jetstreamManager(nc);
  let gets = 0;
  const counting = new Proxy(jsm, {
    get: (target, prop) =>
      prop === "streams"
        ? new Proxy(target.streams, {
            get: (streams, p) => (p === "getMessage" ? (...args: unknown[]) => (gets++, (streams.getMessage as (...a: unknown[]) => unknown)(...args)) : Reflect.get(streams, p)),
          })
        : Reflect.get(target, prop),
  });
  const lookup = createResultLookup(async () => counting);
  const batcher = createResultBatcher(nc);
  const first = Array.from({ length: 4 }, (_, i) => result("c3-001", i + 1, 0, "other"));
  await Promise.all(first.slice(0, 2).map((r) => batcher.publish(r)));
  await Promise.all(first.slice(2).map((r) => batcher.publish(r)));
  t.true(await lookup.hasResult(first[3]!));
  const afterFirst = gets;
  // Own subject (nothing), then past the two batches already read: the end of the plan's batches.
  t.true(await lookup.hasResult(first[0]!));
  t.is(gets - afterFirst, 2, "the batches read before are not read again");
  const later = [5, 6].map((i) => result("c3-001", i, 0, "other"));
  await Promise.all(later.map((r) => batcher.publish(r)));
  t.true(await lookup.hasResult(later[1]!), "a batch stored since is read");
  t.false(await lookup.hasResult(result("c3-001", 7, 0, "other")));
});
