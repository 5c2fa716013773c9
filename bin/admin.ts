/**
 * `npm run admin -- <group> <verb> [--flag value ...] [--json] [--function NAME_OR_ARN]`
 *
 * Locally it runs the admin handler in this process against the local stack's store
 * (DYNAMODB_ENDPOINT, default http://127.0.0.1:$DYNAMODB_PORT); with --function it invokes the
 * deployed admin Lambda instead. With --json, stdout carries exactly one JSON document. The
 * commands are bin/admin-run.ts; this entry point prints what they answer and serves the console.
 */
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
import { lambdaInvoker, localInvoker, unreachableHint } from './admin-invoke.ts';
import { runAdmin } from './admin-run.ts';

/**
 * How every command ends: its last text, then its exit code, with the process left to end by itself.
 * process.exit() right after a write dropped what a pipe had not taken yet: a write to a pipe is
 * asynchronous, and a pipe holds 64 KiB, so `--json | jq` got the first 64 KiB of a longer answer,
 * with exit code 0. Nothing else keeps the process alive once the command is done: the SDK's idle
 * keep-alive sockets are unref'd and every store call clears its timers; only the writes still
 * under way hold it until the reader has them.
 */
function end(code: number, text: string): void {
  (code === 0 ? process.stdout : process.stderr).write(text);
  process.exitCode = code;
}

/** `console [--port N] [--function NAME]`: serves the web console until Ctrl+C (docs/console.md). */
async function runConsole(argv: string[]) {
  const flag = (name: string) => {
    const i = argv.indexOf(`--${name}`);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const port = Number(flag('port') ?? 0);
  const fn = flag('function');
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    return end(2, 'error: --port must be a port number (0 or none picks a free one)\n');
  const invoke = fn ? lambdaInvoker(fn) : localInvoker();
  if (!fn) {
    // Fail at start, in one line, rather than on the first page.
    try {
      await invoke({ command: 'stores list', args: {} });
    } catch (err) {
      return end(1, `error: ${(err as Error).message || (err as Error).name}${unreachableHint(err)}\n`);
    }
  }
  const { startConsole } = await import('./console/server.ts');
  const running = await startConsole({ invoke, port });
  process.stdout.write(
    `Admin console (${fn ? `admin Lambda ${fn}` : 'local stack'}) on ${running.origin}\n` +
      `Open this address once (it carries this run's secret; 127.0.0.1 only):\n  ${running.loginUrl}\nCtrl+C stops it.\n`,
  );
  const stop = () => void running.close().then(() => process.exit(0));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

async function main() {
  const argv = process.argv.slice(2);
  if (argv[0] === 'console' && !argv.includes('--help') && !argv.includes('-h')) return runConsole(argv.slice(1));
  const { code, text } = await runAdmin(argv);
  end(code, text);
}

void main();
