export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] as number;
}

export const median = (values: readonly number[]) => percentile(values, 50);

/**
 * Runs each variant `rounds` times, alternating (a, b, a, b...) so that a machine that gets
 * busier or quieter during the run weighs on both alike, and returns each one's samples.
 */
export async function alternate<K extends string>(
  rounds: number,
  variants: Record<K, () => Promise<number>>,
): Promise<Record<K, number[]>> {
  const names = Object.keys(variants) as K[];
  const samples = Object.fromEntries(names.map((name) => [name, [] as number[]])) as Record<K, number[]>;
  for (let round = 0; round < rounds; round += 1) {
    for (const name of names) samples[name].push(await variants[name]());
  }
  return samples;
}

export const mean = (values: readonly number[]) =>
  values.length === 0 ? Number.NaN : values.reduce((sum, v) => sum + v, 0) / values.length;
