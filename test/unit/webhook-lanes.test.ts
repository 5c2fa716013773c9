import { describe, expect, it } from 'vitest';
import { parseDeliveryMessage } from '#domain/webhook/delivery.ts';
import { activeEndpoint, deferSeconds, freeSlot, laneFor, type Endpoint } from '#domain/webhook/endpoint.ts';

const endpoint = (over: Partial<Endpoint>): Endpoint => ({ ...activeEndpoint(7), ...over });

describe('webhook lanes: the circuit and the slow lane’s attempt slots', () => {
  it('keeps an endpoint in the fast lane below the failure count, moves it to the slow lane at it', () => {
    expect(laneFor(endpoint({}), 3)).toBe('fast');
    expect(laneFor(endpoint({ consecutive_failures: 2 }), 3)).toBe('fast');
    expect(laneFor(endpoint({ consecutive_failures: 3 }), 3)).toBe('slow');
    expect(laneFor(endpoint({ consecutive_failures: 40 }), 3)).toBe('slow');
    // A success resets the streak: the circuit is closed again.
    expect(laneFor(endpoint({ consecutive_failures: 0 }), 3)).toBe('fast');
  });

  it('leaves a parked endpoint to its probe, in no lane of attempts', () => {
    expect(laneFor(endpoint({ state: 'parked', consecutive_failures: 10 }), 3)).toBe('fast');
  });

  it('finds a slot never taken or whose lease has ended, and none when all are held', () => {
    const now = Date.parse('2026-11-28T12:00:00.000Z');
    const later = '2026-11-28T12:00:30.000Z';
    const earlier = '2026-11-28T11:59:00.000Z';
    expect(freeSlot(endpoint({}), 2, now)).toBe(0);
    expect(freeSlot(endpoint({ attempt_slots: { 0: later } }), 2, now)).toBe(1);
    expect(freeSlot(endpoint({ attempt_slots: { 0: later, 1: later } }), 2, now)).toBeUndefined();
    expect(freeSlot(endpoint({ attempt_slots: { 0: later, 1: earlier } }), 2, now)).toBe(1);
    // Slots beyond a lowered cap do not count.
    expect(freeSlot(endpoint({ attempt_slots: { 0: later, 1: earlier } }), 1, now)).toBeUndefined();
  });

  it('defers a message over the cap for 2 s, doubling, never beyond the wait limit', () => {
    expect([0, 1, 2, 3, 8, 9, 30].map((n) => deferSeconds(n, 900))).toEqual([2, 4, 8, 16, 512, 900, 900]);
    expect(deferSeconds(5, 20)).toBe(20);
  });

  it('carries the deferral count in the message, and ignores a nonsense one', () => {
    const base = { event_id: 'evt_1', key_id: 7, round: 0 };
    expect(parseDeliveryMessage(JSON.stringify({ ...base, deferred: 3 }))).toEqual({ ...base, deferred: 3 });
    expect(parseDeliveryMessage(JSON.stringify({ ...base, deferred: 'x' }))).toEqual(base);
    expect(parseDeliveryMessage(JSON.stringify({ ...base, deferred: -1 }))).toEqual(base);
  });
});
