/**
 * One part of `npm run bench`. A section starts whatever it needs (its own local stack, a synth)
 * and returns its report as Markdown: the same text is printed and written into
 * docs/performance.md, so the docs' figures are always the last full run's.
 */
export interface BenchSection {
  /** What `BENCH_ONLY=<name>[,<name>]` selects. */
  readonly name: string;
  run(): Promise<string>;
}
