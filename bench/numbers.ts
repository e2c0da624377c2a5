/** Rounding, sums and number formatting of the benchmarks' figures. */

export const round1 = (n: number) => Math.round(n * 10) / 10;
export const round2 = (n: number) => Math.round(n * 100) / 100;
export const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
export const mean = (values: number[]) => (values.length ? sum(values) / values.length : 0);
/** The middle value (the upper of the two middle ones for an even count). */
export const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
/** `12,345`; `-` for a figure that was not measured. */
export const fmt = (n: number | undefined) => (n === undefined ? '-' : n.toLocaleString('en-US'));
