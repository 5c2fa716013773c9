/**
 * A key's webhook endpoint (its URL) is `active` (deliveries are attempted) or `parked` (it failed
 * for a sustained time: its deliveries stay `pending` and are not attempted; a probe tries it on a
 * schedule and, on success, drains the backlog oldest first). docs/webhooks.md, "Parked endpoints".
 */
export type EndpointState = 'active' | 'parked';

export interface Endpoint {
  key_id: number;
  state: EndpointState;
  /** When the current state began. */
  since: string | null;
  /** Why it is parked (null while active). */
  reason: string | null;
  /** Failed attempts in a row, and when the first of them was. Reset by any success. */
  consecutive_failures: number;
  first_failure_at: string | null;
  last_failure_at: string | null;
  last_error: string | null;
  /** When the next probe is due (parked only). */
  next_probe_at: string | null;
  /** A probe or drain is running until then (one at a time per endpoint). */
  probe_lease_until: string | null;
  /**
   * The slow lane's attempts of this endpoint under way: slot number → lease end. A slot whose
   * lease has ended is free (a crashed attempt holds it no longer than its lease).
   */
  attempt_slots: Record<number, string>;
}

/**
 * The signer's two lanes (docs/webhooks.md, "Lanes"): `fast` for endpoints that answer, `slow`
 * (its own queue, its own small concurrency, at most a few attempts per endpoint at once) for
 * endpoints whose circuit is open, so that receivers timing out never take the fast lane's executions.
 */
export type Lane = 'fast' | 'slow';

/**
 * The circuit opens after `afterFailures` failed attempts in a row (3 by default: seconds, not the
 * 15 min of parking) and closes at the next success, which ends the streak. While it is open the
 * endpoint's deliveries are still attempted, in the slow lane; each of them is the probe that can
 * close it. A parked endpoint is attempted by its probe alone (webhook-probe.ts).
 */
export function laneFor(e: Endpoint, afterFailures: number): Lane {
  return e.state === 'active' && e.consecutive_failures >= afterFailures ? 'slow' : 'fast';
}

/** A free attempt slot of the `cap` an endpoint has in the slow lane (per the item as read), or undefined. */
export function freeSlot(e: Endpoint, cap: number, nowMs: number): number | undefined {
  for (let slot = 0; slot < cap; slot++) {
    const until = e.attempt_slots[slot];
    if (until === undefined || Date.parse(until) <= nowMs) return slot;
  }
  return undefined;
}

/**
 * How long a message over its endpoint's cap waits before it asks again: 2 s, doubling with each
 * deferral, at most `limit`. A backlog behind a hanging endpoint so costs a few sends per message,
 * not one every few seconds for as long as it waits.
 */
export function deferSeconds(deferred: number, limit: number): number {
  return Math.min(limit, 2 ** Math.min(deferred + 1, 20));
}

/** The state of an endpoint never seen failing. */
export function activeEndpoint(keyId: number): Endpoint {
  return {
    key_id: keyId,
    state: 'active',
    since: null,
    reason: null,
    consecutive_failures: 0,
    first_failure_at: null,
    last_failure_at: null,
    last_error: null,
    next_probe_at: null,
    probe_lease_until: null,
    attempt_slots: {},
  };
}

/**
 * Parked after `afterFailures` failed attempts in a row spanning at least `afterSeconds`: a burst
 * of failures (one bad deploy at the receiver, many events at once) is not yet sustained, and a
 * single slow delivery failing through its schedule is not many.
 */
export function shouldPark(
  e: Endpoint,
  nowMs: number,
  limits: { afterFailures: number; afterSeconds: number },
): boolean {
  if (e.state !== 'active' || e.consecutive_failures < limits.afterFailures || e.first_failure_at === null)
    return false;
  return nowMs - Date.parse(e.first_failure_at) >= limits.afterSeconds * 1000;
}

export function parkReason(e: Endpoint, afterSeconds: number): string {
  const minutes = Math.max(
    1,
    Math.round(
      (Date.parse(e.last_failure_at ?? e.first_failure_at ?? '') - Date.parse(e.first_failure_at ?? '')) / 60_000,
    ),
  );
  const span = Number.isNaN(minutes) ? `${afterSeconds} s` : `${minutes} min`;
  return `${e.consecutive_failures} failed attempts in a row over ${span}; last: ${e.last_error ?? 'unknown'}`;
}

/** What `webhooks deliveries` and `webhooks endpoints` show. */
export function endpointView(e: Endpoint) {
  return {
    state: e.state,
    since: e.since,
    reason: e.reason,
    consecutive_failures: e.consecutive_failures,
    last_failure_at: e.last_failure_at,
    last_error: e.last_error,
    next_probe_at: e.state === 'parked' ? e.next_probe_at : null,
  };
}
export type EndpointView = ReturnType<typeof endpointView>;

/** The queue message of a probe: try the parked endpoint of `key_id` when `due_at` has come. */
export interface ProbeMessage {
  kind: 'probe';
  key_id: number;
  due_at: string;
}

export function parseProbeMessage(body: string): ProbeMessage | undefined {
  let m: Partial<ProbeMessage>;
  try {
    m = JSON.parse(body) as Partial<ProbeMessage>;
  } catch {
    return undefined;
  }
  if (
    m?.kind !== 'probe' ||
    !Number.isInteger(m.key_id) ||
    typeof m.due_at !== 'string' ||
    Number.isNaN(Date.parse(m.due_at))
  )
    return undefined;
  return { kind: 'probe', key_id: m.key_id as number, due_at: m.due_at };
}
