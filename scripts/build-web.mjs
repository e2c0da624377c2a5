// Builds the browser assets into dist/public: the tracker bundle (/tracker.js), the demo page (/demo)
// and the web console (/console). `npm run build` runs it after the TypeScript build.
import { copyFileSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { argv, stdout } from 'node:process';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build as esbuild } from 'esbuild';
import { build as vite } from 'vite';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'dist', 'public');
const quiet = argv.includes('--quiet');

mkdirSync(out, { recursive: true });

// The tracker: one dependency-free IIFE for a <script> tag.
await esbuild({
  entryPoints: [join(root, 'tracker', 'src', 'index.ts')],
  outfile: join(out, 'tracker.js'),
  bundle: true,
  format: 'iife',
  minify: true,
  target: ['es2019'],
  legalComments: 'none',
  logLevel: 'warning',
});

// The demo page: its template (the service fills in the source id), script and styles.
await esbuild({
  entryPoints: [join(root, 'tracker', 'demo', 'demo.ts')],
  outfile: join(out, 'demo.js'),
  bundle: true,
  format: 'iife',
  minify: true,
  target: ['es2019'],
  logLevel: 'warning',
});
copyFileSync(join(root, 'tracker', 'demo', 'index.html'), join(out, 'demo.html'));
copyFileSync(join(root, 'tracker', 'demo', 'demo.css'), join(out, 'demo.css'));

// The console: a Vite build served under /console/.
rmSync(join(out, 'console'), { recursive: true, force: true });
await vite({
  configFile: false,
  root: join(root, 'console'),
  base: '/console/',
  logLevel: quiet ? 'warn' : 'info',
  build: { outDir: join(out, 'console'), emptyOutDir: true, chunkSizeWarningLimit: 1024 },
});

const tracker = readFileSync(join(out, 'tracker.js'));
stdout.write(
  `dist/public/tracker.js: ${tracker.length} bytes minified, ${gzipSync(tracker, { level: 9 }).length} bytes gzipped\n`,
);
