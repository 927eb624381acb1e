/**
 * Console tests: serial tests sharing one system and one browser, and driving pages (buttons by their text,
 * dialogs, inputs filled as a paste would, the error beside a field).
 */
import anyTest, { type ExecutionContext, type TestFn } from "ava";
import type { Browser, Page } from "puppeteer-core";
import { launchBrowser } from "./browser.js";
import { startSystem, type SystemOptions, type TestSystem } from "./system.js";

export interface ConsoleTestContext {
  sys: TestSystem;
  browser: Browser;
}

/** Serial tests (one page at a time: a shared browser on a small machine) with a system and a browser, stopped after. */
export function consoleTests(options: SystemOptions): TestFn<ConsoleTestContext>["serial"] {
  const test = (anyTest as TestFn<ConsoleTestContext>).serial;
  test.before(async (t) => {
    t.context.sys = await startSystem(options);
    t.context.browser = await launchBrowser();
  });
  test.after.always(async (t) => {
    await t.context.browser?.close();
    await t.context.sys?.stop();
  });
  return test;
}

/** A page in a browser context of its own (its own session storage), closed when the test ends, failed or not. */
export async function newPage(t: ExecutionContext<ConsoleTestContext>): Promise<Page> {
  const context = await t.context.browser.createBrowserContext();
  t.teardown(() => context.close());
  const page = await context.newPage();
  page.setDefaultTimeout(30_000);
  return page;
}

/** Clicks the button whose text is exactly `label` (inside `scope`, default the page). */
export async function clickButton(page: Page, label: string, scope = "body"): Promise<void> {
  const button = await page.waitForSelector(`${scope} ::-p-xpath(.//button[normalize-space(.)="${label}"])`);
  await button!.click();
}

/** Clicks the first element matching `selector`, again if a redraw replaced it between finding and clicking. */
export async function clickRow(page: Page, selector: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await page.waitForSelector(selector);
      await page.click(selector);
      return;
    } catch (err) {
      if (attempt >= 5 || !/detached|not clickable|No node found/i.test(String(err))) throw err;
    }
  }
}

/** Clicks `label` in the open dialog. */
export async function confirmInDialog(page: Page, label: string): Promise<void> {
  await page.waitForSelector("dialog[open]");
  await clickButton(page, label, "dialog[open]");
}

/** Replaces the value of the input or text area `selector` (as a paste would, with an input event). */
export async function fillIn(page: Page, selector: string, value: string): Promise<void> {
  await page.$eval(
    selector,
    (el, v) => {
      (el as HTMLInputElement).value = v;
      el.dispatchEvent(new Event("input", { bubbles: true }));
    },
    value,
  );
}

/** The error shown beside the form field named `name`, once there is one. */
export async function fieldError(page: Page, name: string): Promise<string> {
  const error = await page.waitForSelector(`.field.invalid:has([name="${name}"]) .field-error`);
  return error!.evaluate((el) => el.textContent ?? "");
}
