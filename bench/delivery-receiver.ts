/**
 * The receiver of `npm run bench:delivery`: answers every delivery 200 at once and counts its events
 * and their lag (arrival time less `metadata.time.insert`). `GET /stats` answers the counts since
 * the last `POST /reset`. A child process (`node --import tsx bench/delivery-receiver.ts`, env PORT
 * and HOST), so that its work does not share a thread with the load generator; prints `ready <port>`.
 */
import { createServer } from 'node:http';

const INSERT = /"insert":\s*"([^"]+)"/g;
let events = 0;
let requests = 0;
let lagsMs: number[] = [];
let firstAt = 0;
let lastAt = 0;

function percentile(sorted: number[], p: number): number {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]! : 0;
}

const server = createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/stats') {
    const sorted = [...lagsMs].sort((a, b) => a - b);
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        events,
        requests,
        firstAt,
        lastAt,
        lagMs: { p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99), max: sorted.at(-1) ?? 0 },
      }),
    );
    return;
  }
  if (req.method === 'POST' && req.url === '/reset') {
    events = requests = firstAt = lastAt = 0;
    lagsMs = [];
    res.end();
    return;
  }
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const now = Date.now();
    res.writeHead(200);
    res.end();
    requests++;
    firstAt ||= now;
    lastAt = now;
    for (const match of Buffer.concat(chunks).toString('utf8').matchAll(INSERT)) {
      events++;
      lagsMs.push(now - Date.parse(match[1]!));
    }
  });
});
const port = Number(process.env.PORT ?? 8688);
server.listen(port, process.env.HOST ?? '127.0.0.1', () => console.log(`ready ${port}`));
