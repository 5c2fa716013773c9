/**
 * A pool of execution environments for one function: worker threads, each with the function's
 * own environment variables (so bundles never share `process.env` or module state), a heap
 * limit from the template's memory size, and the template's timeout (the environment is
 * destroyed on a timeout, as Lambda does). One invocation per environment at a time; a new one
 * starts when all are busy, up to `maxEnvironments`.
 */
import { randomUUID } from 'node:crypto';
import { Worker } from 'node:worker_threads';
import type { FunctionSpec } from './functions.ts';

export class LambdaError extends Error {
  constructor(
    readonly errorType: string,
    message: string,
  ) {
    super(message);
    this.name = errorType;
  }
}

interface Environment {
  worker: Worker;
  ready: Promise<void>;
}

type Outcome =
  | { ok: true; result: string }
  | { ok: false; error: { errorType: string; errorMessage: string; stack?: string[] } };

export class FunctionSandbox {
  private readonly idle: Environment[] = [];
  private readonly waiting: ((env: Environment) => void)[] = [];
  private count = 0;
  private stopped = false;

  constructor(
    readonly spec: FunctionSpec,
    private readonly env: Record<string, string>,
    private readonly maxEnvironments = 4,
  ) {}

  private start(): Environment {
    const worker = new Worker(new URL('./sandbox-worker.mjs', import.meta.url), {
      env: this.env,
      workerData: {
        codeDir: this.spec.codeDir,
        handler: this.spec.handler,
        functionName: this.spec.name,
        functionArn: this.spec.arn,
        memoryMb: this.spec.memoryMb,
      },
      resourceLimits: { maxOldGenerationSizeMb: this.spec.memoryMb },
      // As deployed: no --enable-source-maps; a bundle maps its own stacks when printed (shared/stack-traces.ts).
      execArgv: [],
    });
    worker.unref();
    const ready = new Promise<void>((resolve, reject) => {
      worker.once('message', (m: { ready?: true; initError?: { errorType: string; errorMessage: string } }) =>
        m.ready ? resolve() : reject(new LambdaError(m.initError!.errorType, m.initError!.errorMessage)),
      );
      worker.once('error', reject);
    });
    ready.catch(() => undefined);
    this.count++;
    worker.once('exit', () => this.count--);
    return { worker, ready };
  }

  private async acquire(): Promise<Environment> {
    const env = this.idle.pop();
    if (env) return env;
    if (this.count < this.maxEnvironments) return this.start();
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private release(env: Environment): void {
    const next = this.waiting.shift();
    if (next) next(env);
    else this.idle.push(env);
  }

  /** Runs one invocation; resolves with the JSON result, rejects with a LambdaError. */
  async invoke(event: unknown, requestId = randomUUID()): Promise<unknown> {
    if (this.stopped) throw new LambdaError('ServiceException', 'the rehearsal stack is stopping');
    const env = await this.acquire();
    try {
      await env.ready;
    } catch (err) {
      await env.worker.terminate();
      throw err;
    }
    const timeoutMs = this.spec.timeoutSeconds * 1000;
    const outcome = await new Promise<Outcome | 'timeout' | 'crash'>((resolve) => {
      const timer = setTimeout(() => resolve('timeout'), timeoutMs);
      const onExit = () => resolve('crash');
      env.worker.once('exit', onExit);
      const onMessage = (m: Outcome & { requestId: string }) => {
        if (m.requestId !== requestId) return;
        clearTimeout(timer);
        env.worker.off('message', onMessage);
        env.worker.off('exit', onExit);
        resolve(m);
      };
      env.worker.on('message', onMessage);
      env.worker.postMessage({ requestId, event: JSON.stringify(event), deadline: Date.now() + timeoutMs });
    });
    if (outcome === 'timeout' || outcome === 'crash') {
      await env.worker.terminate();
      if (this.waiting.length && !this.stopped) this.release(this.start());
      throw outcome === 'timeout'
        ? new LambdaError('Sandbox.Timedout', `Task timed out after ${this.spec.timeoutSeconds.toFixed(2)} seconds`)
        : new LambdaError('Runtime.ExitError', 'the execution environment exited (out of memory?)');
    }
    this.release(env);
    if (!outcome.ok) throw new LambdaError(outcome.error.errorType, outcome.error.errorMessage);
    return JSON.parse(outcome.result);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.idle.splice(0).map((e) => e.worker.terminate()));
  }
}
