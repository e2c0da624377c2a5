/** The load of a benchmark leg: autocannon posting `body()` to /track for a fixed time. */
import autocannon from 'autocannon';
import { HOST } from './processes.js';

export interface Load {
  port: number;
  /** The next request body; called once per request. */
  body: () => string;
  connections: number;
  seconds: number;
  /** Requests per second over all connections; unset for as many as the server answers. */
  overallRate?: number;
  /** Request headers besides content-type. */
  headers?: Record<string, string>;
}

export async function load({
  port,
  body,
  connections,
  seconds,
  overallRate,
  headers = {},
}: Load): Promise<autocannon.Result> {
  return autocannon({
    url: `http://${HOST}:${port}`,
    connections,
    duration: seconds,
    overallRate,
    requests: [
      {
        method: 'POST',
        path: '/track',
        headers: { 'content-type': 'application/json', ...headers },
        setupRequest: (request) => {
          request.body = body();
          return request;
        },
      },
    ],
  });
}
