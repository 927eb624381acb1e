// Loaded before a compiled Corral process's entry (`node --expose-gc --import=./deploy/dist/preload-idle-gc.js ...`,
// compiled.ts): collects garbage once the process goes idle (idle-gc.ts).
import { collectWhenIdle } from "./idle-gc.js";

collectWhenIdle();
