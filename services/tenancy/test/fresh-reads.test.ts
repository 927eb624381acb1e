import test from "ava";
import { freshReads } from "../src/adapters/fresh-reads.js";

/** A read whose answer the test gives, in the order the reads started. */
function scriptedReads() {
  const started: Array<(value: string) => void> = [];
  const read = () => new Promise<string>((resolve) => started.push(resolve));
  return { started, read };
}

/** The next turn of the event loop: I/O may have come in since. */
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

test("fresh reads - callers of one turn share a read; a later caller never gets the answer of a read started before its turn", async (t) => {
  const { started, read } = scriptedReads();
  const shared = freshReads(read);
  const first = shared();
  const sameTurn = shared();
  t.is(started.length, 1, "callers of the turn the read started in join it");
  await nextTurn();
  const second = shared(); // the first read is in flight: it may have been answered before this caller's message came in
  const third = shared();
  t.is(started.length, 1, "nothing else starts while one is in flight");
  started[0]!("as of before the second caller");
  t.is(await first, "as of before the second caller");
  t.is(await sameTurn, "as of before the second caller");
  await nextTurn();
  t.is(started.length, 2, "the next read starts once the first settled");
  const fourth = shared(); // a turn after the second read started
  started[1]!("as of after the second caller");
  t.is(await second, "as of after the second caller");
  t.is(await third, "as of after the second caller", "callers waiting together share the next read");
  await nextTurn();
  t.is(started.length, 3);
  started[2]!("as of after the fourth caller");
  t.is(await fourth, "as of after the fourth caller");
});

test("fresh reads - a failed read fails its callers only; the next caller reads again", async (t) => {
  let calls = 0;
  const shared = freshReads(async () => {
    calls++;
    if (calls === 1) throw new Error("JetStream did not answer");
    return calls;
  });
  await t.throwsAsync(shared(), { message: "JetStream did not answer" });
  t.is(await shared(), 2);
});

test("fresh reads - a read starts at least minIntervalMs after the previous one started", async (t) => {
  const startedAt: number[] = [];
  const shared = freshReads(
    async () => {
      startedAt.push(performance.now());
      return startedAt.length;
    },
    { minIntervalMs: 20 },
  );
  t.is(await shared(), 1);
  await nextTurn();
  t.is(await shared(), 2, "a later turn gets a read of its own");
  await nextTurn();
  t.is(await shared(), 3);
  t.true(startedAt[1]! - startedAt[0]! >= 20 && startedAt[2]! - startedAt[1]! >= 20, `started at ${startedAt.join(", ")}`);
});
