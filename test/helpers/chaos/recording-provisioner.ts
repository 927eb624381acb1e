/**
 * Entry of the chaos suite's provisioner processes: the reference provisioner carrying the `sim` provider and the
 * `recorder` test automator, both appending each completed call to the side-effect record.
 *
 * Env: CORRAL_NATS_URL, CORRAL_PROVISIONER_ID, CORRAL_PROVISIONER_CAPACITY, CORRAL_PROVISIONER_WORKDIR,
 * CORRAL_CHAOS_RECORD (the record file), CORRAL_CHAOS_ACTION_MS (how long each recorder action takes, default 0).
 */
import { PROVISIONER_INBOX_PREFIX } from "@corral/contracts";
import { runServiceProcess } from "@corral/shared";
import { createSimProvider, startProvisioner } from "@corral/provisioner";
import { createRecorderAutomator, recordingPlugins } from "./side-effects.js";

const required = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
};
const id = required("CORRAL_PROVISIONER_ID");
const record = required("CORRAL_CHAOS_RECORD");

await runServiceProcess({
  name: "provisioner",
  connectionName: `corral-provisioner-${id}`,
  inboxPrefix: PROVISIONER_INBOX_PREFIX,
  env: process.env,
  exit: process.exit,
  start: ({ nc, log }) =>
    startProvisioner({
      nc,
      log,
      id,
      capacity: Number(required("CORRAL_PROVISIONER_CAPACITY")),
      workDir: required("CORRAL_PROVISIONER_WORKDIR"),
      plugins: recordingPlugins([createSimProvider(), createRecorderAutomator(Number(process.env["CORRAL_CHAOS_ACTION_MS"] ?? 0))], record),
      stopTimeoutMs: 5_000,
    }),
});
