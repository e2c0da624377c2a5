/** Command-line options of the benchmarks. */

/** The number an option gives; throws unless it is a finite number of at least `min`. */
export function numberOption(name: string, raw: string | undefined, min: number): number {
  const value = Number(raw);
  if (!Number.isFinite(value) || value < min) throw new Error(`--${name} must be a number >= ${min}`);
  return value;
}
