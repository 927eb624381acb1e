/**
 * Headless Chromium for the console's tests, benchmark and screenshots: Debian's `chromium` (installed with
 * apt-get when missing), driven by puppeteer-core. Only loopback addresses are ever opened.
 */
import { execFileSync, spawnSync } from "node:child_process";
import puppeteer, { type Browser, type Page } from "puppeteer-core";
import type { Caller } from "./api.js";

/** Path of the chromium binary, installed with apt-get when missing. */
export function ensureChromium(): string {
  const find = () => spawnSync("sh", ["-c", "command -v chromium || command -v chromium-browser"], { encoding: "utf8" }).stdout.trim();
  const found = find();
  if (found) return found;
  try {
    execFileSync("apt-get", ["update"], { stdio: "ignore" });
    execFileSync("apt-get", ["install", "-y", "--no-install-recommends", "chromium"], { stdio: "ignore", env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" } });
  } catch {
    throw new Error("the console tests need Debian's chromium: apt-get install chromium");
  }
  const installed = find();
  if (!installed) throw new Error("apt-get installed chromium, but no chromium binary is on the PATH");
  return installed;
}

export interface BrowserOptions {
  /** @default 1280 x 900 */
  width?: number;
  height?: number;
}

export async function launchBrowser(options: BrowserOptions = {}): Promise<Browser> {
  return puppeteer.launch({
    executablePath: ensureChromium(),
    headless: true,
    // --no-sandbox: tests run as root, where Chromium refuses its sandbox.
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run", "--disable-extensions"],
    defaultViewport: { width: options.width ?? 1280, height: options.height ?? 900 },
    // A page that does not answer within a minute is stuck: fail then rather than after puppeteer's three.
    protocolTimeout: 60_000,
  });
}

/** The console's origin for a system's API base URL (`http://127.0.0.1:PORT/v2` -> `http://127.0.0.1:PORT`). */
export const consoleOrigin = (baseUrl: string) => new URL(baseUrl).origin;

/** Opens the console signed in as `user` of `tenant` (the session the sign-in page keeps, set directly). */
export async function openSignedIn(page: Page, baseUrl: string, caller: Caller, hash = "/clusters"): Promise<void> {
  if (!caller.user || !caller.tenant) throw new Error("openSignedIn needs a caller with a user and a tenant");
  const origin = consoleOrigin(baseUrl);
  await page.goto(`${origin}/ui/#/sign-in`);
  await page.evaluate((session) => sessionStorage.setItem("corral.session", JSON.stringify(session)), { userId: caller.user, tenant: caller.tenant });
  await page.goto(`${origin}/ui/#${hash}`);
}

/** Waits until the page's text contains `text` (in any element matching `selector`). */
export async function waitForText(page: Page, selector: string, text: string, timeoutMs = 30_000): Promise<void> {
  await page.waitForFunction(
    (sel, wanted) => [...document.querySelectorAll(sel)].some((el) => (el.textContent ?? "").includes(wanted)),
    { timeout: timeoutMs, polling: 100 },
    selector,
    text,
  );
}
