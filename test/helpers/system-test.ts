import anyTest, { type ExecutionContext, type TestFn } from "ava";
import { startSystem, type SystemOptions, type TestSystem } from "./system.js";

export interface SystemContext {
  sys: TestSystem;
}
export type SystemTest = ExecutionContext<SystemContext>;

/** The `test` of a file whose tests share one system: started before the first test, stopped after the last. */
export function testWithSystem(options: SystemOptions = {}): TestFn<SystemContext> {
  const test = anyTest as TestFn<SystemContext>;
  test.before(async (t) => {
    t.context.sys = await startSystem(options);
  });
  test.after.always(async (t) => {
    await t.context.sys?.stop();
  });
  return test;
}
