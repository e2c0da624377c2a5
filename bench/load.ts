/** The load of a benchmark leg: autocannon posting `body()` to /track for a fixed time. */
import autocannon from 'autocannon';
import { HOST } from './processes.js';

export async function load(
  port: number,
  body: () => string,
  connections: number,
  seconds: number,
  overallRate?: number,
): Promise<autocannon.Result> {
  return autocannon({
    url: `http://${HOST}:${port}`,
    connections,
    duration: seconds,
    overallRate,
    requests: [
      {
        method: 'POST',
        path: '/track',
        headers: { 'content-type': 'application/json' },
        setupRequest: (request) => {
          request.body = body();
          return request;
        },
      },
    ],
  });
}
