/**
 * Entry of the launcher's shared process (shared-process.ts): loads each member's service definition, compiled
 * or from source as this process runs, and runs them together.
 */
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { runServiceGroup, type ServiceDefinition, type ServiceMember } from "@corral/shared";
import { compiledEntryOf, currentRuntime } from "./compiled.js";
import { repoRoot } from "./paths.js";
import { parseSharedMembers, SHARED_PROCESS_ENV, type SharedMember } from "./shared-process.js";

async function memberOf(member: SharedMember): Promise<ServiceMember> {
  const path = currentRuntime === "compiled" ? compiledEntryOf(member.definition) : member.definition;
  const loaded = (await import(pathToFileURL(join(repoRoot, path)).href)) as { serviceProcess?: ServiceDefinition };
  if (loaded.serviceProcess?.name !== member.service) throw new Error(`${path} does not define the ${member.service} service (export serviceProcess)`);
  return { definition: loaded.serviceProcess, env: { ...process.env, ...member.env } };
}

try {
  const members = await Promise.all(parseSharedMembers(process.env[SHARED_PROCESS_ENV]).map(memberOf));
  await runServiceGroup({ members, exit: process.exit, retryFailedStarts: true });
} catch (err) {
  console.error(`[shared process] cannot start: ${(err as Error).message}`);
  process.exit(1);
}
