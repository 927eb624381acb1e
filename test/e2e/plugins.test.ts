/**
 * Plugin resources end to end: uploaded and synced through REST, installed by the provisioner under its work
 * directory (provisioner/src/resource-sync.ts), used by a real cluster's `shell` actions; switched to new versions,
 * unpacked archives, removed when recalled; copied to a bootstrapped tenant and installed for it.
 */
import { lstat, readFile, readdir, readlink, stat } from "node:fs/promises";
import { join } from "node:path";
import { nodeDir, resourceDir } from "@corral/provisioner";
import { api, SUPERADMIN, type ApiResponse } from "../helpers/api.js";
import { show } from "../helpers/assertions.js";
import { uniqueName } from "../helpers/catalog.js";
import { createCluster, createClusterCatalog, waitForStatus } from "../helpers/cluster-fixture.js";
import { waitForAssignment } from "../helpers/clusters.js";
import { eventually } from "../helpers/eventually.js";
import { testWithSystem } from "../helpers/system-test.js";
import { pluginClient } from "../helpers/plugin-rest.js";
import { resourceArchive } from "../../services/plugins/test/tar-builder.js";

const test = testWithSystem({ clusters: 1, provisioners: 1, reconcileIntervalMs: 500 });

const SCRIPTS = "/plugins/automatortypes/shell/scripts";
const ARCHIVES = "/plugins/automatortypes/shell/archives";

type Client = ReturnType<typeof pluginClient>;

async function must(res: Promise<ApiResponse> | ApiResponse, what: string): Promise<ApiResponse> {
  const r = await res;
  if (r.status !== 200) throw new Error(`${what}: ${show(r)}`);
  return r;
}

async function upload(c: Client, path: string, body: string | Uint8Array): Promise<number> {
  const r = await must(c.upload(path, body), `upload ${path}`);
  return JSON.parse(r.text).version as number;
}

/** Reads a file until it has `content` (the provisioner installs asynchronously after sync). */
function eventuallyContent(path: string, content: string, what: string) {
  return eventually(async () => (await readFile(path, "utf8")) === content, { what, timeoutMs: 15_000, intervalMs: 100 });
}

function eventuallyGone(path: string, what: string) {
  return eventually(
    async () => {
      try {
        await lstat(path);
        return false;
      } catch {
        return true;
      }
    },
    { what, timeoutMs: 15_000, intervalMs: 100 },
  );
}

test("plugins e2e - a synced script is on the PATH of shell actions and runs in a real cluster task", async (t) => {
  const { sys } = t.context;
  const catalog = await createClusterCatalog(sys.baseUrl, {
    workers: 2,
    services: [{ name: "marker", actions: { install: "write-marker.sh install", start: "write-marker.sh start" } }],
  });
  await waitForAssignment(sys.nc, catalog.tenant);
  const c = pluginClient(sys.baseUrl, catalog.admin);
  const script = '#!/bin/sh\n# writes which service action ran it, in the node working directory\necho "$CORRAL_SERVICE $1" >> marker.txt\n';
  const version = await upload(c, `${SCRIPTS}/write-marker.sh`, script);
  await must(c.call("POST", `${SCRIPTS}/write-marker.sh/versions/${version}/stage`), "stage");
  await must(c.call("POST", "/plugins/sync"), "sync");
  const installed = join(resourceDir(sys.workDir, catalog.tenant, "automatortypes", "shell", "scripts"), "write-marker.sh");
  await eventuallyContent(installed, script, "the provisioner installed write-marker.sh");
  t.is((await stat(installed)).mode & 0o777, 0o755, "scripts are installed executable (0755)");

  const id = await createCluster(sys.baseUrl, catalog, 1);
  await waitForStatus(sys.baseUrl, catalog, id, "active", 30_000);
  const cluster = await must(api(sys.baseUrl, "GET", `/clusters/${id}`, catalog.admin), "get cluster");
  const node = JSON.parse(cluster.text).nodes[0] as { id: string };
  const marker = await readFile(join(nodeDir(sys.workDir, catalog.tenant, id, node.id), "marker.txt"), "utf8");
  t.is(marker, "marker install\nmarker start\n", "the synced script ran for install and start, in order");
});

test("plugins e2e - provisioners switch to exactly the active set: new versions, unpacked archives, recalled ones removed", async (t) => {
  const { sys } = t.context;
  const catalog = await createClusterCatalog(sys.baseUrl, { workers: 1 });
  await waitForAssignment(sys.nc, catalog.tenant);
  const c = pluginClient(sys.baseUrl, catalog.admin);
  const scripts = resourceDir(sys.workDir, catalog.tenant, "automatortypes", "shell", "scripts");
  const archives = resourceDir(sys.workDir, catalog.tenant, "automatortypes", "shell", "archives");

  await upload(c, `${SCRIPTS}/tool.sh`, "echo v1\n");
  await upload(c, `${SCRIPTS}/tool.sh`, "echo v2\n");
  await upload(c, `${SCRIPTS}/other.sh`, "echo other\n");
  await upload(c, `${ARCHIVES}/kit`, resourceArchive("kit", { "readme.txt": "kit v1\n", "bin/run.sh": "echo run\n" }));
  await must(c.call("POST", `${SCRIPTS}/tool.sh/versions/1/stage`), "stage tool v1");
  await must(c.call("POST", `${SCRIPTS}/other.sh/versions/1/stage`), "stage other");
  await must(c.call("POST", `${ARCHIVES}/kit/versions/1/stage`), "stage kit");
  await must(c.call("POST", "/plugins/sync"), "sync 1");
  await eventuallyContent(join(scripts, "tool.sh"), "echo v1\n", "tool.sh v1 installed");
  await eventuallyContent(join(archives, "kit", "readme.txt"), "kit v1\n", "kit unpacked");
  t.is(await readFile(join(archives, "kit", "bin", "run.sh"), "utf8"), "echo run\n", "nested archive files");
  t.is(await readFile(join(scripts, "other.sh"), "utf8"), "echo other\n");
  t.true((await lstat(join(scripts, "tool.sh"))).isSymbolicLink(), "a resource is switched by replacing one symlink");

  // Stage v2 (v1 recalled) and recall other.sh; nothing moves until sync.
  await must(c.call("POST", `${SCRIPTS}/tool.sh/versions/2/stage`), "stage tool v2");
  await must(c.call("POST", `${SCRIPTS}/other.sh/versions/1/recall`), "recall other");
  await upload(c, `${ARCHIVES}/kit`, resourceArchive("kit", { "readme.txt": "kit v2\n" }));
  await must(c.call("POST", `${ARCHIVES}/kit/versions/2/stage`), "stage kit v2");
  t.is(await readFile(join(scripts, "tool.sh"), "utf8"), "echo v1\n", "still v1 before sync");
  await must(c.call("POST", "/plugins/sync"), "sync 2");
  await eventuallyContent(join(scripts, "tool.sh"), "echo v2\n", "tool.sh switched to v2");
  await eventuallyGone(join(scripts, "other.sh"), "other.sh removed from use");
  await eventuallyContent(join(archives, "kit", "readme.txt"), "kit v2\n", "kit switched to v2");
  await eventuallyGone(join(archives, "kit", "bin"), "nothing of kit v1 left in the active directory");
  t.deepEqual((await readdir(scripts)).sort(), ["tool.sh"], "exactly the active scripts");
  t.regex(await readlink(join(scripts, "tool.sh")), /tool\.sh\/2\/tool\.sh$/, "the link names the active version");

  // Recall everything: after sync the resource types are empty.
  await must(c.call("POST", `${SCRIPTS}/tool.sh/versions/2/recall`), "recall tool v2");
  await must(c.call("POST", `${ARCHIVES}/kit/versions/2/recall`), "recall kit v2");
  await must(c.call("POST", "/plugins/sync"), "sync 3");
  await eventuallyGone(join(scripts, "tool.sh"), "tool.sh removed");
  await eventuallyGone(join(archives, "kit"), "kit removed");
  const listed = await must(c.call("GET", `${SCRIPTS}?status=active`), "list active");
  t.deepEqual(JSON.parse(listed.text), {});
});

test("plugins e2e - bootstrap copies the superadmin's resources and the new tenant's provisioner installs them", async (t) => {
  const { sys } = t.context;
  // The only test of this file that writes superadmin resources.
  const su = pluginClient(sys.baseUrl, SUPERADMIN);
  await upload(su, `${SCRIPTS}/seed.sh`, "echo seed\n");
  await must(su.call("POST", `${SCRIPTS}/seed.sh/versions/1/stage`), "stage seed");
  await must(su.call("POST", "/plugins/sync"), "sync superadmin");

  const name = uniqueName("boot");
  await must(api(sys.baseUrl, "POST", "/tenants", { ...SUPERADMIN, body: { tenant: { name, workers: 1 }, bootstrap: true } }), "bootstrap");
  await waitForAssignment(sys.nc, name);
  const installed = join(resourceDir(sys.workDir, name, "automatortypes", "shell", "scripts"), "seed.sh");
  await eventuallyContent(installed, "echo seed\n", "the bootstrapped tenant's provisioner installed seed.sh");
  const copy = pluginClient(sys.baseUrl, { user: "admin", tenant: name });
  t.deepEqual(JSON.parse((await must(copy.call("GET", `${SCRIPTS}/seed.sh`), "list copy")).text), [
    { name: "seed.sh", version: 1, status: "active" },
  ]);
});

