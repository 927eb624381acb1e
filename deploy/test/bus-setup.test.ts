import test from "ava";
import { retryingPlacement } from "../src/bus-setup.js";

test("bus setup - a placement error of peers still meeting is waited out; any other error is not", async (t) => {
  let calls = 0;
  const retried: string[] = [];
  const placed = await retryingPlacement(
    async () => {
      calls++;
      if (calls < 3) throw new Error("no suitable peers for placement, peer offline");
      return "placed";
    },
    { onRetry: (err) => retried.push(err.message) },
  );
  t.is(placed, "placed");
  t.is(calls, 3);
  t.deepEqual(retried, ["no suitable peers for placement, peer offline", "no suitable peers for placement, peer offline"]);

  let other = 0;
  await t.throwsAsync(
    retryingPlacement(async () => {
      other++;
      throw new Error("insufficient resources");
    }),
    { message: "insufficient resources" },
  );
  t.is(other, 1, "a lasting error fails at once");

  let late = 0;
  await t.throwsAsync(
    retryingPlacement(
      async () => {
        late++;
        throw new Error("JetStream system temporarily unavailable");
      },
      { retryForMs: 600 },
    ),
    { message: /temporarily unavailable/ },
  );
  t.true(late >= 2 && late <= 3, `tried ${late} times within its 600 ms`);

  // A request the busy cluster did not answer in time (nats.js: TimeoutError "timeout") is asked again.
  let unanswered = 0;
  const answered = await retryingPlacement(async () => {
    if (++unanswered < 2) throw Object.assign(new Error("timeout"), { name: "TimeoutError" });
    return "answered";
  });
  t.is(answered, "answered");
  t.is(unanswered, 2);
});
