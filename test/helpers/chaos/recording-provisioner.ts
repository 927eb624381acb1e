/**
 * Entry of the chaos suite's provisioner processes: the reference provisioner process carrying the `sim` provider
 * and the `recorder` test automator, both appending each completed call to the side-effect record.
 *
 * Env: the provisioner's own (CORRAL_NATS_URL, CORRAL_PROVISIONER_ID, _CAPACITY, _WORKDIR, _STOP_TIMEOUT_MS, ...),
 * CORRAL_CHAOS_RECORD (the record file), CORRAL_CHAOS_ACTION_MS (how long each recorder action takes, default 0).
 */
import { createSimProvider, runProvisionerProcess } from "@corral/provisioner";
import { createRecorderAutomator, recordingPlugins } from "./side-effects.js";

const record = process.env["CORRAL_CHAOS_RECORD"];
if (!record) throw new Error("CORRAL_CHAOS_RECORD is required");

await runProvisionerProcess({
  plugins: recordingPlugins([createSimProvider(), createRecorderAutomator(Number(process.env["CORRAL_CHAOS_ACTION_MS"] ?? 0))], record),
});
