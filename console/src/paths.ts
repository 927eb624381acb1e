/** Hash paths pages link to (pages.ts maps them to pages; a page module imports these, never pages.ts). */
export const SIGN_IN_PATH = "/sign-in";
export const HOME_PATH = "/clusters";
export const NEW_CLUSTER_PATH = "/clusters/new";
export const clusterPath = (id: string) => `/clusters/${encodeURIComponent(id)}`;
