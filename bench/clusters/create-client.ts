/**
 * `POST /clusters` over kept-alive node:http connections: the benchmark's client shares the two cores with the
 * system it measures, and fetch (undici, web streams) costs it about 1 ms of CPU per request, several times this.
 */
import { Agent, request } from "node:http";
import type { ClusterCatalog } from "../../test/helpers/cluster-fixture.js";

export interface CreateClient {
  /** Creates a cluster of `numMachines` from the catalog's template; answers its id. */
  create(catalog: ClusterCatalog, numMachines: number, name: string): Promise<string>;
  close(): void;
}

export function createClusterClient(baseUrl: string, connections: number): CreateClient {
  const url = new URL(`${baseUrl}/clusters`);
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  return {
    create(catalog, numMachines, name) {
      const body = JSON.stringify({ name, clusterTemplate: catalog.template, numMachines });
      return new Promise((resolve, reject) => {
        const req = request(
          url,
          {
            method: "POST",
            agent,
            headers: {
              "content-type": "application/json",
              "content-length": Buffer.byteLength(body),
              "Service-UserID": catalog.admin.user ?? "",
              "Service-TenantID": catalog.admin.tenant ?? "",
            },
          },
          (res) => {
            const chunks: Buffer[] = [];
            res.on("data", (c: Buffer) => chunks.push(c));
            res.on("end", () => {
              const text = Buffer.concat(chunks).toString();
              const id = res.statusCode === 200 ? (JSON.parse(text) as { id?: unknown }).id : undefined;
              if (typeof id === "string") resolve(id);
              else reject(new Error(`creating cluster ${name} failed: HTTP ${res.statusCode} ${text}`));
            });
            res.on("error", reject);
          },
        );
        req.on("error", reject);
        req.end(body);
      });
    },
    close: () => agent.destroy(),
  };
}
