// `npm run dev:console`: the console from its sources, reloaded as they change, at
// http://127.0.0.1:5173/console/ (CONSOLE_PORT), in front of a running service: every request that
// is not for the console's own files goes through a proxy to TRACK_URL (http://127.0.0.1:8686).
// Start the service first (npm run dev, or npm start). `npm run build` does not use this file.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const target = process.env.TRACK_URL || 'http://127.0.0.1:8686';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/console/',
  clearScreen: false,
  server: {
    host: '127.0.0.1',
    port: Number(process.env.CONSOLE_PORT || 5173),
    proxy: {
      // The API and the service's other pages: everything outside /console/.
      '^/(?!console(/|$))': { target, changeOrigin: true },
    },
  },
});
