// Local development with Next.js (docs/deployment.md "On a laptop"): `rewrites` forward /api to the
// front proxy, so the page and the API share the Next.js dev server's origin. Next.js runs on 3000,
// so the proxy listens on 3001. Next's rewrite may send the proxy's own host as Host: start the proxy
// with ALLOWED_ORIGINS set to the dev server's origin so that its CSRF check accepts the page's POSTs.
//
//   PORT=3001 ALLOWED_ORIGINS=http://localhost:3000 npm start
//   FRONT_PROXY_URL=http://127.0.0.1:3001 npx next dev
/** @type {import('next').NextConfig} */
const nextConfig = {
  async rewrites() {
    const proxy = process.env.FRONT_PROXY_URL ?? 'http://127.0.0.1:3001';
    return [{ source: '/api/:path*', destination: `${proxy}/api/:path*` }];
  },
};

export default nextConfig;
