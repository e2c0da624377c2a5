/**
 * What the browser tests share: the built assets, the service listening on a free port, a second
 * origin serving test pages, and Debian's Chromium driven by playwright-core (never a downloaded browser).
 */
import { execFileSync, execSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser } from 'playwright-core';
import { startService, type Json, type Service } from '../helpers.js';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const ARTIFACTS = join(ROOT, 'test-artifacts');
export const CHROMIUM = '/usr/bin/chromium';
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-quic',
  '--no-first-run',
  '--disable-component-update',
  '--disable-sync',
];

/** Installs Debian's chromium when it is missing and this runs as root; otherwise fails saying how. */
export function ensureChromium(): void {
  if (existsSync(CHROMIUM)) return;
  if (process.getuid?.() === 0) {
    try {
      execSync('apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium', {
        stdio: 'pipe',
        timeout: 15 * 60_000,
      });
    } catch (error) {
      const output = (error as { stderr?: Buffer }).stderr?.toString().slice(-2000) ?? String(error);
      throw new Error(`Could not install Debian's chromium with apt-get: ${output}`, { cause: error });
    }
  }
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `The browser tests need Debian's Chromium at ${CHROMIUM}: run \`apt-get update && apt-get install -y chromium\` as root.`,
    );
  }
}

/** Builds the tracker, the demo page and the console into dist/public (a few seconds). */
export function buildWeb(): void {
  execFileSync(process.execPath, [join(ROOT, 'scripts', 'build-web.mjs'), '--quiet'], {
    cwd: ROOT,
    stdio: 'pipe',
  });
}

export function launchBrowser(): Promise<Browser> {
  // playwright gives each launch a fresh temporary profile (--user-data-dir) and removes it on close.
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
}

export interface Running {
  service: Service;
  /** http://127.0.0.1:<port> of the service. */
  base: string;
}

/** The real app listening on a free loopback port. */
export async function listen(): Promise<Running> {
  const service = await startService();
  await service.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = service.app.server.address() as AddressInfo;
  return { service, base: `http://127.0.0.1:${port}` };
}

/** Another origin (http://localhost:<port>) serving the pages put into `pages`, as a customer's site would. */
export interface Site {
  origin: string;
  pages: Map<string, string>;
  close(): Promise<void>;
}

export async function startSite(): Promise<Site> {
  const pages = new Map<string, string>();
  const server: Server = createServer((request, response) => {
    const html = pages.get((request.url ?? '/').split('?')[0] ?? '/');
    response.writeHead(html === undefined ? 404 : 200, { 'content-type': 'text/html; charset=utf-8' });
    response.end(html ?? 'not found');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://localhost:${port}`,
    pages,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

export function artifact(name: string): string {
  mkdirSync(ARTIFACTS, { recursive: true });
  return join(ARTIFACTS, name);
}

/** Polls `check` until it returns something other than undefined/false, or fails after `ms`. */
export async function eventually<T>(
  what: string,
  check: () => Promise<T | undefined | false> | T | undefined | false,
  ms = 10_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export type { Json } from '../helpers.js';

/** The management API of the running service, with the test token. */
export async function read(running: Running, url: string): Promise<Json> {
  const res = await running.service.get(url);
  if (res.statusCode !== 200) throw new Error(`GET ${url}: ${res.statusCode} ${res.body}`);
  return res.json();
}

/** Stored events of a type (newest first). */
export async function storedEvents(running: Running, query: Record<string, string>): Promise<Json[]> {
  return (await read(running, `/events?${new URLSearchParams({ limit: '1000', ...query })}`)).result;
}
