/** What deploy/src/build.ts records at {@link STAMP_PATH} once every output is written. */
export interface BuildStamp {
  /** The commit the checkout was on; null outside a git repository. */
  commit: string | null;
  /** When the build started (ms since the epoch): a source modified after it needs another build. */
  startedAt: number;
  /** The sources, relative to the repository root: directories (walked) and files. */
  inputs: string[];
  /** What the build wrote, relative to the repository root: every workspace's dist/. */
  outputs: string[];
}

/** The build's record, relative to the repository root. */
export declare const STAMP_PATH: string;

/** The commit the checkout at `root` is on (read from `.git`, without the git program); null when unknown. */
export declare function currentCommit(root: string): string | null;

/** Why the compiled build at `root` cannot be used as it is, or undefined when it can. */
export declare function buildProblem(root: string): string | undefined;
