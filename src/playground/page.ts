/**
 * The HTML of the development playground (`GET /playground`): plain markup and CSS, no framework.
 * The behaviour is in `main.ts`, served as `/playground/app.js`, which loads the SDK bundle from
 * `/playground/sdk.js`.
 *
 * @module
 */

/** The playground page. Static: no value from the request is written into it. */
export const PLAYGROUND_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Front proxy playground</title>
<link rel="icon" type="image/svg+xml" href="data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 32 32'%3E%3Crect width='32' height='32' rx='7' fill='%230b57d0'/%3E%3Cpath d='M10 7h13v4h-8.5v4H21v4h-6.5v6H10z' fill='%23fff'/%3E%3C/svg%3E">
<style>
  :root { color-scheme: light; --ink: #1d2330; --muted: #4f5a6b; --line: #d5dae3; --accent: #0b57d0; --ok: #116329; --bad: #a4161a; --bg: #f6f7f9; }
  * { box-sizing: border-box; }
  body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink); background: var(--bg); }
  header, main { max-width: 68rem; margin: 0 auto; padding: 1rem 1.25rem; }
  header { display: flex; flex-wrap: wrap; align-items: baseline; gap: .5rem 1.5rem; }
  h1 { font-size: 1.5rem; margin: .5rem 0; }
  h2 { font-size: 1.15rem; margin: 0 0 .75rem; }
  .tag { font-size: .8rem; padding: .1rem .5rem; border: 1px solid var(--line); border-radius: 1rem; color: var(--muted); background: #fff; }
  main { display: grid; grid-template-columns: repeat(auto-fit, minmax(20rem, 1fr)); gap: 1rem; }
  section { background: #fff; border: 1px solid var(--line); border-radius: .5rem; padding: 1rem 1.25rem; }
  section.wide { grid-column: 1 / -1; }
  label { display: block; font-weight: 600; margin: .5rem 0 .25rem; }
  input, select { width: 100%; font: inherit; padding: .45rem .6rem; border: 1px solid #9aa3b2; border-radius: .35rem; background: #fff; }
  input:disabled, select:disabled { background: #eef1f5; color: var(--muted); }
  .step { margin-top: 1rem; padding: .75rem 1rem; border: 2px solid var(--accent); border-radius: .5rem; background: #f3f7ff; }
  .step h3 { font-size: 1rem; margin: 0 0 .25rem; }
  .step input { max-width: 12rem; font: 1.25rem/1.2 ui-monospace, SFMono-Regular, Menlo, monospace; letter-spacing: .2em; }
  button { font: inherit; padding: .45rem .9rem; margin: .5rem .5rem 0 0; border: 1px solid var(--accent); border-radius: .35rem; background: var(--accent); color: #fff; cursor: pointer; }
  button.secondary { background: #fff; color: var(--accent); }
  button.danger { background: #fff; color: var(--bad); border-color: var(--bad); }
  button:disabled { opacity: .55; cursor: not-allowed; }
  :focus-visible { outline: 3px solid #f2a900; outline-offset: 2px; }
  dl { display: grid; grid-template-columns: max-content 1fr; gap: .25rem 1rem; margin: .5rem 0 0; }
  dt { color: var(--muted); }
  dd { margin: 0; font-weight: 600; overflow-wrap: anywhere; }
  code { font: .9em ui-monospace, SFMono-Regular, Menlo, monospace; background: #eef1f5; padding: .05rem .3rem; border-radius: .25rem; overflow-wrap: anywhere; }
  .status { font-weight: 600; }
  .status[data-state="in"] { color: var(--ok); }
  .status[data-state="out"] { color: var(--muted); }
  .alert { grid-column: 1 / -1; border: 2px solid var(--bad); background: #fff5f5; border-radius: .5rem; padding: .75rem 1.25rem; }
  .alert h2 { color: var(--bad); }
  .error { color: var(--bad); font-weight: 600; }
  .ok { color: var(--ok); font-weight: 600; }
  .muted { color: var(--muted); font-size: .92rem; }
  ul.games { list-style: none; padding: 0; margin: .5rem 0 0; display: grid; grid-template-columns: repeat(auto-fill, minmax(12rem, 1fr)); gap: .5rem; }
  ul.games li { border: 1px solid var(--line); border-radius: .35rem; padding: .4rem .6rem; }
  ul.games small { display: block; color: var(--muted); }
  ul.faults { list-style: none; padding: 0; margin: .5rem 0 0; }
  ul.faults li { border: 1px solid var(--line); border-left: 4px solid var(--bad); border-radius: .35rem; padding: .3rem .6rem; margin-top: .35rem; overflow-wrap: anywhere; }
  details pre { font: .8rem/1.45 ui-monospace, SFMono-Regular, Menlo, monospace; background: #eef1f5; padding: .5rem; border-radius: .35rem; overflow: auto; }
  ol.log { margin: .5rem 0 0; padding-left: 3rem; max-height: 18rem; overflow: auto; font: .85rem/1.45 ui-monospace, SFMono-Regular, Menlo, monospace; }
  ol.log li { white-space: pre-wrap; overflow-wrap: anywhere; }
  [hidden] { display: none !important; }
</style>
</head>
<body data-session="out">
<header>
  <h1>Front proxy playground</h1>
  <span class="tag">development only</span>
  <p id="status" class="status" role="status" aria-live="polite" data-state="out">Signed out</p>
</header>
<main>
  <section id="forced" class="alert" role="alert" hidden>
    <h2>You were logged out</h2>
    <p id="forced-message"></p>
    <p>Reference: <code id="forced-ref"></code> <span class="muted" id="forced-explain"></span></p>
    <p class="muted">The forced-logout beacon was sent to <code>POST /api/logs/auth-logout</code>.</p>
  </section>

  <section aria-labelledby="login-title">
    <h2 id="login-title">Session</h2>
    <form id="login-form">
      <label for="login">E-mail or CPF</label>
      <input id="login" name="login" type="text" autocomplete="username" value="demo@example.com" list="demo-logins" required>
      <datalist id="demo-logins">
        <option value="demo@example.com">ordinary user</option>
        <option value="2fa@example.com">asks for a second-factor code (123456)</option>
        <option value="cancelled@example.com">cancelled account</option>
      </datalist>
      <label for="password">Password</label>
      <input id="password" name="password" type="password" autocomplete="current-password" value="Demo#2026" required>
      <button id="login-button" type="submit">Log in</button>
      <button id="logout" type="button" class="secondary">Log out</button>
    </form>
    <form id="two-factor-form" class="step" aria-labelledby="two-factor-title" hidden>
      <h3 id="two-factor-title">Second step: verification code</h3>
      <p id="two-factor-prompt" class="muted"></p>
      <label for="two-factor-code">Code</label>
      <input id="two-factor-code" name="two_factor_code" type="text" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{4,8}" maxlength="8" required>
      <p class="muted">The sandbox accepts <code>123456</code>.</p>
      <button id="two-factor-button" type="submit">Verify and log in</button>
      <button id="two-factor-cancel" type="button" class="secondary">Cancel</button>
      <p id="two-factor-result" aria-live="polite"></p>
    </form>
    <p id="login-result" aria-live="polite"></p>
    <p class="muted">Cookies visible to scripts: <code id="cookie-view">(none)</code>. The session cookie is HttpOnly.</p>
  </section>

  <section aria-labelledby="account-title">
    <h2 id="account-title">Profile and wallet</h2>
    <button id="load-account" type="button">Load profile and wallet</button>
    <dl>
      <dt>Name</dt><dd id="profile-name">–</dd>
      <dt>E-mail</dt><dd id="profile-email">–</dd>
      <dt>User id</dt><dd id="profile-id">–</dd>
      <dt>Balance</dt><dd id="wallet-balance">–</dd>
      <dt>Bonus</dt><dd id="wallet-bonus">–</dd>
    </dl>
    <p id="account-result" aria-live="polite"></p>
  </section>

  <section aria-labelledby="deposit-title">
    <h2 id="deposit-title">PIX deposit</h2>
    <p class="muted">Deposits 5000 cents (R$&nbsp;50,00) with <code>POST /api/payments/deposit</code>, then polls
      <code>GET /api/payments/deposit-status</code> every second until the charge is paid.</p>
    <button id="deposit" type="button">Deposit R$ 50,00 by PIX</button>
    <dl>
      <dt>Transaction</dt><dd id="deposit-id">–</dd>
      <dt>Status</dt><dd id="deposit-status" aria-live="polite">–</dd>
      <dt>PIX code</dt><dd><code id="deposit-code">–</code></dd>
    </dl>
  </section>

  <section aria-labelledby="refresh-title">
    <h2 id="refresh-title">Token refresh (spec 3.1)</h2>
    <dl>
      <dt>Token saved</dt><dd id="refresh-saved">–</dd>
      <dt>Next refresh</dt><dd id="refresh-next">–</dd>
      <dt>Tab lock</dt><dd id="refresh-lock">–</dd>
    </dl>
    <button id="refresh-now" type="button" class="secondary">Refresh now</button>
    <h2 style="margin-top:1rem">Forced logout</h2>
    <p class="muted">Makes the sandbox BFF expire this session (through <code>/api/dev/proxy</code>). The next
      authenticated call then fails with 401 <code>token_expired</code> and the page logs out.</p>
    <button id="expire" type="button" class="danger">Expire session in the sandbox</button>
  </section>

  <section aria-labelledby="faults-title">
    <h2 id="faults-title">Upstream faults (sandbox)</h2>
    <p class="muted">Makes one endpoint of the sandbox BFF slow, hang, fail, or spoil its answers (compressed without
      being asked, truncated, empty) until it is cleared, to watch the proxy keep the other routes answering and turn a
      spoilt answer into a clear error; a drifted answer shows up in the proxy's upstream contract checks (its log
      and metrics). Through <code>/api/dev/proxy/__sandbox/faults</code>.</p>
    <form id="fault-form">
      <label for="fault-path">BFF path (exact, or a prefix ending in <code>*</code>)</label>
      <input id="fault-path" name="path" type="text" value="/users/wallet" list="fault-paths" required pattern="/.*" maxlength="200">
      <datalist id="fault-paths">
        <option value="/users/wallet">wallet (Load profile and wallet)</option>
        <option value="/auth/user-profile">profile (login, Load profile)</option>
        <option value="/casino-games/*">game list (cached by the proxy)</option>
        <option value="/wallet/add-credit">PIX deposit</option>
        <option value="/wallet/charge/*">deposit status</option>
        <option value="/users/refresh-token">token refresh</option>
      </datalist>
      <label for="fault-kind">Fault</label>
      <select id="fault-kind" name="kind">
        <option value="slow">slow: the real answer after the delay</option>
        <option value="hang">hang: no answer until cleared</option>
        <option value="fail">fail: 503 Service Unavailable</option>
        <option value="compressed-gzip">compressed: the real answer gzip-coded without being asked</option>
        <option value="compressed-br">compressed: the real answer br-coded without being asked</option>
        <option value="truncated">truncated: the first half of the real answer</option>
        <option value="empty">empty: the real status, no body</option>
        <option value="drifted">drifted: the real answer with one field of another type (a BFF that changed its contract)</option>
      </select>
      <label for="fault-field">Field a drifted answer changes (e.g. <code>user.id</code> of the profile, <code>data[].slug</code>)</label>
      <input id="fault-field" name="field" type="text" value="user.id" maxlength="200" disabled>
      <label for="fault-delay">Delay (ms, at most 120000)</label>
      <input id="fault-delay" name="delayMs" type="number" min="0" max="120000" step="100" value="8000" required>
      <button id="fault-apply" type="submit">Apply</button>
      <button id="fault-clear" type="button" class="secondary">Clear this path</button>
      <button id="fault-clear-all" type="button" class="danger">Clear all</button>
      <button id="fault-refresh" type="button" class="secondary">Refresh list</button>
    </form>
    <p id="fault-result" aria-live="polite"></p>
    <ul id="fault-list" class="faults" aria-label="Faults in force"></ul>
    <details>
      <summary>The same with curl, against the sandbox BFF</summary>
      <pre>BFF=http://127.0.0.1:4000   # npm run sandbox; or through this proxy: http://localhost:3000/api/dev/proxy
curl -X POST $BFF/__sandbox/faults -H 'content-type: application/json' -d '{"path":"/users/wallet","delayMs":8000}'
curl -X POST $BFF/__sandbox/faults -H 'content-type: application/json' -d '{"path":"/users/wallet","hang":true}'
curl -X POST $BFF/__sandbox/faults -H 'content-type: application/json' -d '{"path":"/users/wallet","status":503}'
curl -X POST $BFF/__sandbox/faults -H 'content-type: application/json' -d '{"path":"/users/wallet","answer":"compressed","coding":"br"}'
curl -X POST $BFF/__sandbox/faults -H 'content-type: application/json' -d '{"path":"/users/wallet","answer":"truncated"}'
curl -X POST $BFF/__sandbox/faults -H 'content-type: application/json' -d '{"path":"/auth/user-profile","answer":"drifted","field":"user.id"}'
curl $BFF/__sandbox/faults
curl -X DELETE "$BFF/__sandbox/faults?path=/users/wallet"
curl -X DELETE $BFF/__sandbox/faults</pre>
    </details>
  </section>

  <section class="wide" aria-labelledby="games-title">
    <h2 id="games-title">Games</h2>
    <button id="games" type="button" class="secondary">List games</button>
    <p id="games-result" class="muted" aria-live="polite"></p>
    <ul id="games-list" class="games"></ul>
  </section>

  <section class="wide" aria-labelledby="log-title">
    <h2 id="log-title">Activity</h2>
    <ol id="log" class="log" reversed></ol>
  </section>
</main>
<noscript><p class="error">The playground needs JavaScript.</p></noscript>
<script type="module" src="/playground/app.js"></script>
</body>
</html>
`;
