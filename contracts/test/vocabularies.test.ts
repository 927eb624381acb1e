/** The vocabularies defined once in contracts: task names and the sets derived from them, cluster actions. */
import test from "ava";
import {
  ClusterAction,
  NODE_TASKS,
  PROVIDER_TASKS,
  PlanAction,
  TaskName,
  isTaskName,
  parsePlanAction,
  planActionOf,
  serviceActionOf,
  type PlannedClusterAction,
} from "../src/index.js";

test("task names - node tasks, provider tasks and service actions as Coopr splits them", (t) => {
  t.deepEqual([...NODE_TASKS].sort(), ["BOOTSTRAP", "CONFIRM", "CREATE", "DELETE"]);
  t.deepEqual([...PROVIDER_TASKS].sort(), ["CONFIRM", "CREATE", "DELETE"]);
  const serviceTasks = Object.values(TaskName).filter((name) => !NODE_TASKS.has(name));
  t.deepEqual(
    Object.fromEntries(serviceTasks.map((name) => [name, serviceActionOf(name)])),
    { INSTALL: "install", REMOVE: "remove", INITIALIZE: "initialize", CONFIGURE: "configure", START: "start", STOP: "stop" },
  );
  for (const name of NODE_TASKS) t.is(serviceActionOf(name), undefined, name);
  t.true(isTaskName("BOOTSTRAP"));
  t.false(isTaskName("bootstrap"), "task names are upper case");
  t.false(isTaskName("toString"), "no inherited property is a task name");
});

test("cluster actions - one vocabulary, upper case in the planner", (t) => {
  const planned = Object.values(ClusterAction).filter((a): a is PlannedClusterAction => a !== ClusterAction.SolveLayout);
  t.deepEqual(planned.map(planActionOf), [
    "CLUSTER_CREATE",
    "CLUSTER_DELETE",
    "CLUSTER_CONFIGURE",
    "CLUSTER_CONFIGURE_WITH_RESTART",
    "STOP_SERVICES",
    "START_SERVICES",
    "RESTART_SERVICES",
    "ADD_SERVICES",
    "ADD_NODES",
    "REMOVE_NODES",
    "REPLACE_NODE",
  ]);
  t.deepEqual(Object.values(PlanAction), planned.map(planActionOf));
  t.is(PlanAction.Create, "CLUSTER_CREATE");
  t.is(parsePlanAction("cluster_create"), "CLUSTER_CREATE");
  t.is(parsePlanAction("ADD_SERVICES"), "ADD_SERVICES");
  t.is(parsePlanAction("solve_layout"), undefined, "solving plans no tasks");
  t.is(parsePlanAction("cluster_explode"), undefined);
});
