import { runProvisionerProcess } from "./process.js";

await runProvisionerProcess();
