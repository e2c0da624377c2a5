/**
 * The ceiling for our stack: Fastify 5 parsing the same body as the service and answering a
 * /track-shaped response without doing any work (bench/bare-app.ts). Started by `npm run bench` and
 * `npm run bench:floor` as a child process (`node --import tsx bench/bare-server.ts`, env PORT and HOST);
 * prints `ready <port>` once listening.
 */
import { bareApp, serve } from './bare-app.js';

await serve(bareApp(), 8687);
