/**
 * Shared by the solver tests: coopr-server's BaseSolverTest template `reactor-medium` (provider joyent) with its
 * services, hardware and image types, and small builders.
 */
import {
  isCorralError,
  type CorralError,
  type ClusterTemplate,
  type MachineType,
  type Service,
} from "@corral/contracts";

/** A service with only runtime requirements and conflicts, and no actions. */
export const svc = (name: string, runtimeRequires: string[] = [], conflicts: string[] = []): Service => ({
  name,
  dependencies: { provides: [], conflicts, install: { requires: [], uses: [] }, runtime: { requires: runtimeRequires, uses: [] } },
  provisioner: { actions: {} },
});

/** The CorralError `fn` throws (fails the test when it throws anything else). */
export function badRequest(t: { throws: (fn: () => unknown) => unknown }, fn: () => unknown): CorralError {
  const err = t.throws(fn) as CorralError;
  if (!isCorralError(err)) throw new Error(`expected a CorralError, got ${String(err)}`);
  return err;
}

const joyentType = (name: string, key: "flavor" | "image", value: string): MachineType => ({
  name,
  providermap: { joyent: { [key]: value } },
});

export const reactorServices = ["namenode", "datanode", "resourcemanager", "nodemanager", "hbasemaster", "regionserver", "zookeeper", "reactor"];

export const reactorTemplate = (): ClusterTemplate => ({
  name: "reactor-medium",
  compatibility: { hardwaretypes: [], imagetypes: [], services: reactorServices },
  defaults: { services: reactorServices, provider: "joyent", config: {} },
  constraints: {
    services: {
      namenode: { hardwaretypes: ["large-mem"], imagetypes: ["centos6", "ubuntu12"], quantities: { min: 1, max: 1 } },
      datanode: { hardwaretypes: ["medium", "large-cpu"], imagetypes: ["centos6", "ubuntu12"], quantities: { min: 1, max: 50 } },
      zookeeper: { hardwaretypes: ["small", "medium"], imagetypes: ["centos6"], quantities: { min: 1, max: 5 } },
      reactor: { hardwaretypes: ["medium", "large"], quantities: { min: 1, max: 5 } },
    },
    layout: {
      mustcoexist: [
        ["datanode", "nodemanager", "regionserver"],
        ["namenode", "resourcemanager", "hbasemaster"],
      ],
      cantcoexist: [
        ["datanode", "namenode"],
        ["datanode", "zookeeper"],
        ["namenode", "zookeeper"],
        ["datanode", "reactor"],
        ["namenode", "reactor"],
      ],
    },
  },
});

export const reactorCatalog = () => ({
  services: [
    svc("namenode"),
    svc("datanode", ["namenode"]),
    svc("resourcemanager", ["datanode"]),
    svc("nodemanager", ["resourcemanager"]),
    svc("hbasemaster", ["datanode"]),
    svc("regionserver", ["hbasemaster"]),
    svc("zookeeper"),
    svc("reactor", ["zookeeper", "regionserver", "nodemanager"]),
  ],
  hardwareTypes: [
    joyentType("small", "flavor", "Small 2GB"),
    joyentType("medium", "flavor", "Medium 4GB"),
    joyentType("large-mem", "flavor", "Large 32GB"),
    joyentType("large-cpu", "flavor", "Large 16GB"),
  ],
  imageTypes: [joyentType("centos6", "image", "joyent-hash-of-centos6.4"), joyentType("ubuntu12", "image", "joyent-hash-of-ubuntu12")],
});
