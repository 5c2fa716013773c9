/**
 * The Lambda Invoke API (`POST /2015-03-31/functions/{name}/invocations`) in front of the
 * rehearsal's functions, so that `npm run admin -- ... --function NAME` reaches the admin
 * function exactly as it reaches the deployed one (AWS_ENDPOINT_URL_LAMBDA points here). A
 * function error answers 200 with `X-Amz-Function-Error: Unhandled`, as Lambda does.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { readBody, send } from '#emulation/local/http-io.ts';
import type { FunctionSpec } from './functions.ts';
import { LambdaError } from './sandbox.ts';

export const INVOKE_PATH = /^\/2015-03-31\/functions\/([^/]+)\/invocations$/;

export function createInvokeApi(
  functions: FunctionSpec[],
  invoke: (functionArn: string, event: unknown) => Promise<unknown>,
) {
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const name = decodeURIComponent(INVOKE_PATH.exec(new URL(req.url ?? '/', 'http://local').pathname)?.[1] ?? '');
    const fn = functions.find((f) => f.name === name || f.arn === name || f.logicalId === name);
    if (!fn)
      return send(
        res,
        404,
        { Type: 'User', message: `Function not found: ${name}` },
        { 'x-amzn-errortype': 'ResourceNotFoundException' },
      );
    const body = await readBody(req);
    const payload = body === 'too_large' ? null : JSON.parse(body.toString('utf8') || 'null');
    try {
      send(res, 200, JSON.stringify(await invoke(fn.arn, payload)), { 'x-amz-executed-version': '$LATEST' });
    } catch (err) {
      const e = err instanceof LambdaError ? err : new LambdaError('Error', (err as Error).message);
      send(res, 200, { errorType: e.errorType, errorMessage: e.message }, { 'x-amz-function-error': 'Unhandled' });
    }
  };
}
