/** Audit ids (`<seq>.<index>`) in log order, and the entries of either form of an audit stream message. */
import test from "ava";
import { auditIdOf, auditPositionOf, compareAuditIds, entriesOfAuditMessage, latestAuditId, type AuditEntry } from "@corral/contracts";

test("audit ids - <seq>.<index>, a plain <seq> as its first entry; anything else is none", (t) => {
  t.deepEqual(auditPositionOf("812.3"), { seq: 812, index: 3 });
  t.deepEqual(auditPositionOf("812"), { seq: 812, index: 0 });
  t.is(auditIdOf({ seq: 812, index: 3 }), "812.3");
  for (const id of ["", "0", "0.1", "abc", "1.", ".1", "1.01", "1.2.3", "-1", "1e3", "99999999999999999", "1.1234567890"]) {
    t.is(auditPositionOf(id), undefined, id);
  }
});

test("audit ids - log order compares the sequence, then the place, as numbers", (t) => {
  const ids = ["12.10", "9.0", "12.2", "12", "13.0", "12.9", "100.1"];
  t.deepEqual([...ids].sort(compareAuditIds), ["9.0", "12", "12.2", "12.9", "12.10", "13.0", "100.1"]);
  t.is(compareAuditIds("12", "12.0"), 0);
});

test("audit ids - the latest of some entries, in log order, not as text", (t) => {
  t.is(latestAuditId([{ id: "12.9" }, undefined, { id: "12.10" }, { id: "9.5" }]), "12.10");
  t.is(latestAuditId([{ id: "12.2" }], "13.0"), "13.0");
  t.is(latestAuditId([]), "");
});

test("audit messages - a single entry, a batch of a known version, nothing else", (t) => {
  const entry = { time: "2026-11-28T10:00:00.000Z", tenant: "acme", target: "a" } as AuditEntry;
  const other = { ...entry, target: "b" };
  t.deepEqual(entriesOfAuditMessage(entry), [entry]);
  t.deepEqual(entriesOfAuditMessage({ batch: 1, entries: [entry, other] }), [entry, other]);
  t.deepEqual(entriesOfAuditMessage({ batch: 2, entries: [entry] }), []);
  t.deepEqual(entriesOfAuditMessage({ batch: 1, entries: "x" }), []);
  t.deepEqual(entriesOfAuditMessage("entry"), []);
  t.deepEqual(entriesOfAuditMessage(null), []);
  t.deepEqual(entriesOfAuditMessage({ tenant: "acme" }), []);
});
