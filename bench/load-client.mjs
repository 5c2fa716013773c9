// The throughput section's HTTP client, in a process of its own so that the stack under test does
// not share its event loop with it. argv[2]: JSON { urls, tokens, concurrency, seconds }; each
// token is used in turn; prints JSON { done, failed, seconds, cpuMs } (cpuMs: this process's CPU
// over the run, user + system). seconds 0: one request per token (warming the authorizer's cache
// for every key), concurrency at a time.
import { Agent, request } from 'node:http';

const { urls, tokens, concurrency, seconds } = JSON.parse(process.argv[2]);
const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
const get = (i) =>
  new Promise((resolve, reject) => {
    const req = request(
      urls[i % urls.length],
      { agent, headers: { Authorization: `Bearer ${tokens[i % tokens.length]}`, Accept: 'application/json' } },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode));
      },
    );
    req.on('error', reject);
    req.end();
  });

let next = 0;
let done = 0;
let failed = 0;
const started = performance.now();
const cpuAtStart = process.cpuUsage();
const until = started + seconds * 1000;
const more = () => (seconds === 0 ? next < tokens.length : performance.now() < until);
await Promise.all(
  Array.from({ length: concurrency }, async () => {
    while (more()) {
      const status = await get(next++);
      done++;
      if (status !== 200) failed++;
    }
  }),
);
agent.destroy();
const cpu = process.cpuUsage(cpuAtStart);
process.stdout.write(
  JSON.stringify({
    done,
    failed,
    seconds: (performance.now() - started) / 1000,
    cpuMs: (cpu.user + cpu.system) / 1000,
  }),
);
