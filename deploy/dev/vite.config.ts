// Local development with Vite (docs/deployment.md "On a laptop"): the dev server forwards /api to the
// front proxy, so the page and the API share the dev server's origin as they share the site's in
// production. With `changeOrigin: true` the proxy receives its own host as Host; `xfwd: true` sends
// the dev server's as X-Forwarded-Host, which the proxy's CSRF check takes as the request's own
// origin because the dev server (loopback) is in TRUSTED_PROXIES.
//
//   TRUSTED_PROXIES=127.0.0.1,::1 npm start   # the proxy (and its sandbox) on http://127.0.0.1:3000
//   FRONT_PROXY_URL=http://127.0.0.1:3000 npx vite
import { defineConfig } from 'vite';

export default defineConfig({
  server: {
    proxy: {
      '/api': {
        target: process.env.FRONT_PROXY_URL ?? 'http://127.0.0.1:3000',
        changeOrigin: true,
        xfwd: true,
        // Live odds over a WebSocket go through too (docs/deployment.md "Live streams").
        ws: true,
      },
    },
  },
});
