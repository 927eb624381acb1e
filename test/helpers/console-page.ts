/** Driving console pages in tests: buttons by their text, dialogs, inputs filled as a paste would. */
import type { Page } from "puppeteer-core";

/** Clicks the button whose text is exactly `label` (inside `scope`, default the page). */
export async function clickButton(page: Page, label: string, scope = "body"): Promise<void> {
  const button = await page.waitForSelector(`${scope} ::-p-xpath(.//button[normalize-space(.)="${label}"])`);
  await button!.click();
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
