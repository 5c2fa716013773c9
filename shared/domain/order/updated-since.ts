const PATTERN =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?(?:([Zz])|([+\- ])(\d{2}):?(\d{2}))$/;

export type UpdatedSince = { ok: true; value: string } | { ok: false; message: string };

const INVALID =
  'updated_since must be an ISO 8601 date-time with an offset, like 2026-11-22T01:24:20Z or 2026-11-22T03:24:20+02:00';

/**
 * `updated_since` (docs/contract.md#orders): an ISO 8601 date-time WITH its offset (`Z`, `+02:00`, `-0530`),
 * seconds and fraction optional. A timestamp without an offset is refused: it names a different
 * instant in every time zone, and a sync that guesses wrong skips hours of orders.
 *
 * The value becomes the UTC form the table stores (`2026-11-22T01:24:20.000Z`), so that string
 * comparison is time comparison. A sub-millisecond fraction rounds up: stored times have whole
 * milliseconds, and "at or after 10:00:00.0005" starts at 10:00:00.001.
 */
export function parseUpdatedSince(raw: string): UpdatedSince {
  const m = PATTERN.exec(raw);
  if (!m) return { ok: false, message: INVALID };
  const [, ys, mos, ds, hs, mis, ss, frac, , sign, ohs, oms] = m;
  const [y, mo, d, h, mi, s] = [ys, mos, ds, hs, mis, ss ?? '0'].map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const monthDays = mo === 2 ? (isLeap(y) ? 29 : 28) : [4, 6, 9, 11].includes(mo) ? 30 : 31;
  if (mo < 1 || mo > 12 || d < 1 || d > monthDays || h > 23 || mi > 59 || s > 59)
    return { ok: false, message: INVALID };
  let offsetMinutes = 0;
  if (sign !== undefined) {
    const oh = Number(ohs);
    const om = Number(oms);
    if (oh > 23 || om > 59) return { ok: false, message: INVALID };
    // A `+` sent unencoded in a query string arrives as a space; nothing else can mean.
    offsetMinutes = (sign === '-' ? -1 : 1) * (oh * 60 + om);
  }
  const digits = frac ?? '';
  let ms = Number(digits.slice(0, 3).padEnd(3, '0'));
  if (/[1-9]/.test(digits.slice(3))) ms += 1;
  // Date.UTC maps years 0-99 to 1900-1999; a leap base year keeps 29 February valid until the real year is set.
  const wall = new Date(Date.UTC(2000, mo - 1, d, h, mi, s));
  wall.setUTCFullYear(y, mo - 1, d);
  const instant = new Date(wall.getTime() + ms - offsetMinutes * 60_000);
  const year = instant.getUTCFullYear();
  if (year < 0) return { ok: true, value: '0000-01-01T00:00:00.000Z' };
  if (year > 9999) return { ok: true, value: '9999-12-31T23:59:59.999Z' };
  return { ok: true, value: instant.toISOString() };
}

function isLeap(y: number): boolean {
  return (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
}
