import { runServiceProcess } from "@corral/shared";
import { serviceProcess } from "./service-process.js";

await runServiceProcess({ ...serviceProcess, env: process.env, exit: process.exit });
