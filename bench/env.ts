/** A benchmark's numeric setting: `process.env[name]` as a number, or `fallback` when unset. */
export const envNumber = (name: string, fallback: number): number => Number(process.env[name] ?? fallback);
