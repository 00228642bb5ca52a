// Local development with Vite (docs/deployment.md "On a laptop"): the dev server forwards /api to the
// front proxy, so the page and the API share the dev server's origin as they share the site's in
// production. `changeOrigin` stays false (Vite's default): the proxy's CSRF check compares the
// browser's Origin with the Host it receives, which must be the dev server's.
//
//   npm start                      # the proxy (and its sandbox) on http://127.0.0.1:3000
//   FRONT_PROXY_URL=http://127.0.0.1:3000 npx vite
import { defineConfig } from 'vite';

export default defineConfig({
  server: {
    proxy: {
      '/api': {
        target: process.env.FRONT_PROXY_URL ?? 'http://127.0.0.1:3000',
        changeOrigin: false,
        // Live odds over a WebSocket go through too (docs/deployment.md "Live streams").
        ws: true,
      },
    },
  },
});
