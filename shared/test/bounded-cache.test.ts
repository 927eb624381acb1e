import test from "ava";
import { BoundedCache } from "../src/bounded-cache.js";

test("bounded cache - least recently used out first, by entries and by weight, never the entry just set", (t) => {
  const byCount = new BoundedCache<string, number>({ maxEntries: 2 });
  byCount.set("a", 1);
  byCount.set("b", 2);
  t.is(byCount.get("a"), 1); // "a" is now the most recently used
  byCount.set("c", 3);
  t.false(byCount.has("b"));
  t.true(byCount.has("a") && byCount.has("c"));

  const byWeight = new BoundedCache<string, string>({ maxWeight: 10 });
  byWeight.set("x", "x", 4);
  byWeight.set("y", "y", 4);
  byWeight.set("x", "x", 6); // re-weighed: 10 in all, nothing goes
  t.is(byWeight.weight, 10);
  byWeight.set("z", "z", 20); // alone over the bound: everything else goes, "z" stays
  t.deepEqual([byWeight.has("x"), byWeight.has("y"), byWeight.has("z")], [false, false, true]);
  t.is(byWeight.weight, 20);
  byWeight.delete("z");
  t.is(byWeight.weight, 0);
});
