import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * What every log line and metric of one invocation carries: set when the invocation starts
 * (request id, function, cold start) and filled in as it learns more (the key and store once the
 * authorizer or the delivery log named them). Held per async context, so the local gateway's
 * concurrent requests never share one (a Lambda container runs one invocation at a time).
 */
export interface InvocationContext {
  request_id: string | null;
  function_name: string | null;
  cold_start: boolean | null;
  key_id: number | null;
  store_id: string | null;
  /** For the request metrics: set by the idempotency layer when it answered from storage. */
  idempotency_replay?: boolean;
}

const scope = new AsyncLocalStorage<InvocationContext>();

const empty = (): InvocationContext => ({
  request_id: null,
  function_name: null,
  cold_start: null,
  key_id: null,
  store_id: null,
});

/** Runs `fn` with a context of its own (what is not given is inherited from the outer one). */
export function withInvocationContext<T>(fields: Partial<InvocationContext>, fn: () => T): T {
  return scope.run({ ...(scope.getStore() ?? empty()), ...fields }, fn);
}

/** Adds what the invocation has learnt (key, store) to its context; outside one, nothing. */
export function addInvocationContext(fields: Partial<InvocationContext>): void {
  const current = scope.getStore();
  if (current) Object.assign(current, fields);
}

export function invocationContext(): InvocationContext {
  return scope.getStore() ?? empty();
}

/** True on the first call of each returned function: one per Lambda handler module, as Lambda's cold start. */
export function coldStartTracker(): () => boolean {
  let cold = true;
  return () => {
    const was = cold;
    cold = false;
    return was;
  };
}

/** The context of one queue message: the invocation's request id (the message id locally), key and store to come. */
export function invocation(
  record: { messageId: string },
  context: { awsRequestId?: string; functionName?: string } | undefined,
  coldStart: boolean,
): InvocationContext {
  return {
    request_id: context?.awsRequestId ?? record.messageId,
    function_name: context?.functionName ?? null,
    cold_start: coldStart,
    key_id: null,
    store_id: null,
  };
}
