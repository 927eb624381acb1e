export { sleep, backoffMs, retryUntil } from "@corral/shared";
