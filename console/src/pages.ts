/**
 * Every page of the console, one line each: its hash path, its title, whether the navigation bar shows it.
 * A new page is a module under pages/ and a line here.
 */
import type { PageDefinition } from "./router.js";
import { clusterListPage } from "./pages/cluster-list.js";
import { clusterPage } from "./pages/cluster.js";
import { createClusterPage } from "./pages/create-cluster.js";
import { signInPage } from "./pages/sign-in.js";
import { HOME_PATH, NEW_CLUSTER_PATH, SIGN_IN_PATH } from "./paths.js";

export const pages: readonly PageDefinition[] = [
  { pattern: SIGN_IN_PATH, title: "Sign in", mount: signInPage },
  { pattern: HOME_PATH, title: "Clusters", nav: { label: "Clusters" }, mount: clusterListPage },
  { pattern: NEW_CLUSTER_PATH, title: "New cluster", nav: { label: "New cluster" }, mount: createClusterPage },
  { pattern: "/clusters/:id", title: "Cluster", mount: clusterPage },
];
