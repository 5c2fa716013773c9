/**
 * `updated_at` never goes back and never repeats, even when this machine's clock is behind the
 * last writer's: writes are guarded on the updated_at they read, and the "updated since" index
 * and every client's sync cursor depend on its order. A slow clock writes previous + 1 ms.
 */
export function nextUpdatedAt(previous: string | undefined, nowMs: number = Date.now()): string {
  const prev = previous === undefined ? Number.NaN : Date.parse(previous);
  return new Date(Number.isNaN(prev) ? nowMs : Math.max(nowMs, prev + 1)).toISOString();
}

export const nowIso = (): string => new Date().toISOString();
