// Local development with Next.js (docs/deployment.md "On a laptop"): `rewrites` forward /api to the
// front proxy, so the page and the API share the Next.js dev server's origin. Next.js runs on 3000,
// so the proxy listens on 3001. Next's rewrite sends the proxy's host as Host and the page's as
// X-Forwarded-Host (with X-Forwarded-Proto); the proxy's CSRF check takes the latter as the request's
// own origin because the Next.js server (loopback) is in TRUSTED_PROXIES.
//
//   PORT=3001 TRUSTED_PROXIES=127.0.0.1,::1 npm start
//   FRONT_PROXY_URL=http://127.0.0.1:3001 npx next dev
/** @type {import('next').NextConfig} */
const nextConfig = {
  async rewrites() {
    const proxy = process.env.FRONT_PROXY_URL ?? 'http://127.0.0.1:3001';
    return [{ source: '/api/:path*', destination: `${proxy}/api/:path*` }];
  },
};

export default nextConfig;
