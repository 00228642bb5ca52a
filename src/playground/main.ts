/**
 * The development playground's script (served as `/playground/app.js`): drives the SDK against the
 * proxy — demo login (with the second-factor step of spec 3.2 when the login answers
 * `type: "two_factor_code"`), profile and wallet, a PIX deposit polled until paid, the game list,
 * the token refresh driver, the forced-logout path after the sandbox expires the session, and the
 * sandbox's fault rules (one BFF endpoint slow, hung or failing until cleared).
 *
 * The calls made for the signed-in user share one `AbortSignal`: a logout (manual or forced) aborts
 * the ones still in flight, so none of them paints the old user's data or, failing after the
 * cookie is gone, shows a forced logout the user did not have. A manual logout then clears the page.
 *
 * The SDK is imported from `../browser/index.js`; the playground's bundler maps that import to the
 * SDK bundle `/playground/sdk.js`, so the page exercises the built artefact.
 *
 * @module
 */
import {
  createProxyClient,
  explainRef,
  type ForcedLogoutBeacon,
  isProxyError,
  type ProxyError,
  REFRESH_INTERVAL_MS,
  startRefreshDriver,
} from '../browser/index.js';

const $ = <T extends HTMLElement = HTMLElement>(id: string): T => {
  const el = document.getElementById(id);
  if (!el) throw new Error(`missing #${id}`);
  return el as T;
};

const logList = $('log');

function log(text: string): void {
  const item = document.createElement('li');
  item.textContent = `${new Date().toLocaleTimeString('en-GB')}  ${text}`;
  logList.prepend(item);
}

/**
 * An event listener of an async `handler`: the browser ignores what a listener returns, so a failure
 * the handler did not show itself is written to the page's log instead of being lost.
 */
function handled<E extends Event>(handler: (event: E) => Promise<void>): (event: E) => void {
  return (event) => {
    handler(event).catch((error: unknown) => log(`unexpected failure: ${describeError(error)}`));
  };
}

function describeError(error: unknown): string {
  if (isProxyError(error)) return `${error.message} (status ${error.status}, reason ${error.reason ?? '–'}, #${error.ref})`;
  return error instanceof Error ? error.message : String(error);
}

function isAbort(error: unknown): boolean {
  return error instanceof Error && error.name === 'AbortError';
}

/** The signal of the calls made for the current signed-in user; aborted and replaced at each logout. */
let sessionWork = new AbortController();

function endSessionWork(): void {
  sessionWork.abort();
  sessionWork = new AbortController();
}

function money(cents: unknown, currency = 'BRL'): string {
  if (typeof cents !== 'number') return '–';
  return new Intl.NumberFormat('pt-BR', { style: 'currency', currency }).format(cents / 100);
}

/** Logs every request the client makes (the beacon goes through `sendBeacon`, logged separately). */
const loggingFetch: typeof fetch = async (input, init) => {
  const method = init?.method ?? 'GET';
  const url = String(input);
  try {
    const res = await fetch(input, init);
    log(`${method} ${url} → ${res.status}`);
    return res;
  } catch (error) {
    log(`${method} ${url} → network failure`);
    throw error;
  }
};

/** Buttons that call routes needing a session: enabled only while the client believes it has one. */
const SESSION_BUTTONS = ['load-account', 'deposit', 'refresh-now', 'expire'];

function showSession(active: boolean, name?: string): void {
  document.body.dataset.session = active ? 'in' : 'out';
  const status = $('status');
  status.dataset.state = active ? 'in' : 'out';
  status.textContent = active ? `Signed in${name ? ` as ${name}` : ''}` : 'Signed out';
  $('cookie-view').textContent = document.cookie === '' ? '(none)' : document.cookie;
  for (const id of SESSION_BUTTONS) $<HTMLButtonElement>(id).disabled = !active;
}

function hideForcedLogout(): void {
  $('forced').hidden = true;
  for (const id of ['forced-message', 'forced-ref', 'forced-explain']) $(id).textContent = '';
  delete document.body.dataset.forcedRef;
}

/** Everything shown about the signed-in user: profile, wallet, deposit, games. */
function clearUserData(): void {
  clearAccount();
  for (const id of ['deposit-id', 'deposit-status', 'deposit-code']) $(id).textContent = '–';
  delete document.body.dataset.depositStatus;
  $('games-list').replaceChildren();
  $('games-result').textContent = '';
}

function showForcedLogout(ref: string, error: ProxyError, beacon: ForcedLogoutBeacon): void {
  $('forced-message').textContent =
    `${error.message} The ${error.method} ${beacon.url} call failed with ${error.status} ${error.reason ?? ''}.`;
  $('forced-ref').textContent = `#${ref}`;
  const explained = explainRef(ref);
  $('forced-explain').textContent =
    explained.endpoint.known && explained.error.known ? `(${explained.endpoint.meaning}: ${explained.error.meaning})` : '';
  $('forced').hidden = false;
  document.body.dataset.forcedRef = ref;
  const loginResult = $('login-result');
  loginResult.textContent = 'Logged out by the proxy: log in again.';
  loginResult.className = 'error';
  endSessionWork();
  clearUserData();
  showSession(false);
  log(`forced logout ${ref}; beacon sent: ${JSON.stringify(beacon)}`);
}

const client = createProxyClient({
  fetch: loggingFetch,
  initiator: 'playground',
  onForcedLogout: showForcedLogout,
});

const driver = startRefreshDriver({ client, interval: 30_000 });

let userId: number | null = null;
let userName: string | undefined;

function clearAccount(): void {
  userId = null;
  userName = undefined;
  for (const id of ['profile-name', 'profile-email', 'profile-id', 'wallet-balance', 'wallet-bonus']) $(id).textContent = '–';
  const result = $('account-result');
  result.textContent = '';
  result.className = '';
}

function renderRefreshState(): void {
  const state = driver.state;
  const time = (ms: number | null) => (ms === null ? '–' : new Date(ms).toLocaleString('en-GB'));
  $('refresh-saved').textContent = time(state.tokenSavedAt);
  const next = state.tokenSavedAt === null ? null : (state.retryAt ?? state.tokenSavedAt + REFRESH_INTERVAL_MS);
  $('refresh-next').textContent = time(next) + (state.failures > 0 ? ` (retry ${state.failures})` : '');
  $('refresh-lock').textContent = driver.lockKind;
}

client.onSessionChange((event) => {
  log(`session ${event.type} (${event.cause})`);
  if (event.type === 'ended') showSession(false);
  // The driver records the new state in the same listener round; read it after.
  queueMicrotask(renderRefreshState);
});

interface Wallet {
  balance?: number;
  balance_cents?: number;
  bonus_balance?: number;
  currency?: string;
}

async function loadAccount(): Promise<void> {
  const result = $('account-result');
  const { signal } = sessionWork;
  result.textContent = 'Loading…';
  result.className = '';
  try {
    const [profile, walletAnswer] = await Promise.all([client.auth.profile({ signal }), client.wallet.refresh({ signal })]);
    if (signal.aborted) return;
    const { user } = profile;
    userId = user.id;
    userName = user.name;
    $('profile-name').textContent = user.name;
    $('profile-email').textContent = user.email;
    $('profile-id').textContent = String(user.id);
    const wallet = ((walletAnswer as { wallet?: Wallet } | undefined)?.wallet ?? {}) as Wallet;
    $('wallet-balance').textContent = money(wallet.balance_cents ?? wallet.balance, wallet.currency);
    $('wallet-bonus').textContent = money(wallet.bonus_balance, wallet.currency);
    result.textContent = 'Up to date.';
    result.className = 'ok';
    showSession(true, userName);
  } catch (error) {
    if (isAbort(error) || signal.aborted) return;
    result.textContent = describeError(error);
    result.className = 'error';
  }
}

/** Login and password waiting for their second factor (spec 3.2), kept only in this page's memory. */
let pendingLogin: { login: string; password: string } | null = null;

function showTwoFactorStep(credentials: { login: string; password: string }, message: unknown): void {
  pendingLogin = credentials;
  for (const id of ['login', 'password', 'login-button']) $<HTMLInputElement>(id).disabled = true;
  $('two-factor-prompt').textContent =
    typeof message === 'string' && message !== '' ? message : 'Enter the verification code to finish logging in.';
  const result = $('two-factor-result');
  result.textContent = '';
  result.className = '';
  const code = $<HTMLInputElement>('two-factor-code');
  code.value = '';
  $('two-factor-form').hidden = false;
  document.body.dataset.step = 'two-factor';
  code.focus();
}

function closeTwoFactorStep(): void {
  pendingLogin = null;
  for (const id of ['login', 'password', 'login-button']) $<HTMLInputElement>(id).disabled = false;
  $<HTMLInputElement>('two-factor-code').value = '';
  $('two-factor-result').textContent = '';
  $('two-factor-form').hidden = true;
  delete document.body.dataset.step;
}

/** After a login that opened a session: the page of the new user. */
async function signedIn(name: string | undefined): Promise<void> {
  endSessionWork();
  clearUserData();
  closeTwoFactorStep();
  hideForcedLogout();
  const out = $('login-result');
  out.textContent = 'Logged in.';
  out.className = 'ok';
  showSession(true, name);
  await loadAccount();
}

$('login-form').addEventListener(
  'submit',
  handled(async (event) => {
    event.preventDefault();
    const out = $('login-result');
    const button = $<HTMLButtonElement>('login-button');
    button.disabled = true;
    out.textContent = 'Logging in…';
    out.className = '';
    const credentials = { login: $<HTMLInputElement>('login').value.trim(), password: $<HTMLInputElement>('password').value };
    try {
      const answer = await client.auth.login({ body: credentials });
      if (answer.type === 'two_factor_code') {
        out.textContent = 'A second-factor code is required.';
        // A field beyond spec 2.2's LoginResponse: kept in the answer, not in its type.
        showTwoFactorStep(credentials, (answer as { message?: unknown }).message);
        return;
      }
      if (answer.type === 'cancelled_account') {
        out.textContent = 'This account is cancelled.';
      } else {
        await signedIn(answer.user.name);
      }
    } catch (error) {
      out.textContent = describeError(error);
      out.className = 'error';
    }
    button.disabled = false;
  }),
);

$('two-factor-form').addEventListener(
  'submit',
  handled(async (event) => {
    event.preventDefault();
    if (!pendingLogin) return;
    const result = $('two-factor-result');
    const button = $<HTMLButtonElement>('two-factor-button');
    const text = $<HTMLInputElement>('two-factor-code').value.trim();
    if (!/^\d{4,8}$/.test(text)) {
      result.textContent = 'Enter the digits of the code.';
      result.className = 'error';
      return;
    }
    button.disabled = true;
    result.textContent = 'Verifying…';
    result.className = '';
    try {
      const answer = await client.auth.login({ body: { ...pendingLogin, two_factor_code: Number(text) } });
      if (answer.type === 'two_factor_code') {
        result.textContent = 'The code was not accepted: try again.';
        result.className = 'error';
      } else if (answer.type === 'cancelled_account') {
        closeTwoFactorStep();
        $('login-result').textContent = 'This account is cancelled.';
      } else {
        await signedIn(answer.user.name);
      }
    } catch (error) {
      // A wrong code is a pre-authentication failure: its own message, never a forced logout.
      result.textContent = describeError(error);
      result.className = 'error';
    } finally {
      button.disabled = false;
    }
  }),
);

$('two-factor-cancel').addEventListener('click', () => {
  closeTwoFactorStep();
  $('login-result').textContent = '';
});

$('logout').addEventListener(
  'click',
  handled(async () => {
    // First stop what the old session still has in flight, and clear what it showed.
    endSessionWork();
    closeTwoFactorStep();
    hideForcedLogout();
    clearUserData();
    showSession(false);
    const out = $('login-result');
    out.textContent = 'Logging out…';
    out.className = '';
    await client.auth.logout().catch((error: unknown) => log(describeError(error)));
    showSession(false);
    out.textContent = 'Logged out.';
  }),
);

$('load-account').addEventListener('click', () => {
  void loadAccount();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

$('deposit').addEventListener(
  'click',
  handled(async () => {
    const button = $<HTMLButtonElement>('deposit');
    const status = $('deposit-status');
    const { signal } = sessionWork;
    button.disabled = true;
    try {
      if (userId === null) await loadAccount();
      if (userId === null) throw new Error('Log in first.');
      const created = (await client.payments.deposit({
        body: { userId, creditAmount: 5000, paymentMethod: 'pix', currency: 'BRL' },
        signal,
      })) as { transaction_id?: string; status?: string; payment?: { qr_code_text?: string } };
      const transactionId = created.transaction_id;
      if (!transactionId) throw new Error('The deposit answer has no transaction id.');
      signal.throwIfAborted();
      $('deposit-id').textContent = transactionId;
      $('deposit-code').textContent = created.payment?.qr_code_text ?? '–';
      status.textContent = created.status ?? 'pending';
      document.body.dataset.depositStatus = status.textContent;
      for (let poll = 1; poll <= 30 && status.textContent !== 'paid'; poll++) {
        await sleep(1000);
        signal.throwIfAborted();
        const charge = (await client.payments.depositStatus({ query: { transactionId }, signal })) as { status?: string };
        signal.throwIfAborted();
        status.textContent = charge.status ?? 'unknown';
        document.body.dataset.depositStatus = status.textContent;
      }
      if (status.textContent === 'paid') await loadAccount();
    } catch (error) {
      if (!(isAbort(error) || signal.aborted)) {
        status.textContent = describeError(error);
        document.body.dataset.depositStatus = 'error';
      }
    } finally {
      button.disabled = !client.hasSession;
    }
  }),
);

$('games').addEventListener(
  'click',
  handled(async () => {
    const out = $('games-result');
    const list = $('games-list');
    const { signal } = sessionWork;
    out.textContent = 'Loading…';
    try {
      const answer = (await client.games.list({ signal })) as {
        data?: { name?: string; provider?: { name?: string }; categories?: string[] }[];
      };
      if (signal.aborted) return;
      const games = Array.isArray(answer?.data) ? answer.data : [];
      list.replaceChildren(
        ...games.slice(0, 12).map((game) => {
          const item = document.createElement('li');
          item.textContent = game.name ?? '?';
          const small = document.createElement('small');
          small.textContent = [game.provider?.name, ...(game.categories ?? [])].filter(Boolean).join(' · ');
          item.append(small);
          return item;
        }),
      );
      out.textContent = `${games.length} games in the first page${games.length > 12 ? ', 12 shown' : ''}.`;
    } catch (error) {
      if (!(isAbort(error) || signal.aborted)) out.textContent = describeError(error);
    }
  }),
);

$('expire').addEventListener(
  'click',
  handled(async () => {
    try {
      const answer = await client.request<{ sessions?: number }>('POST', '/api/dev/proxy/__sandbox/sessions/expire', {
        signal: sessionWork.signal,
      });
      log(`the sandbox expired ${answer?.sessions ?? 0} session(s); the next authenticated call fails`);
      $('account-result').textContent = 'Session expired in the sandbox: load the profile to see the forced logout.';
    } catch (error) {
      if (!isAbort(error)) log(`expire failed: ${describeError(error)}`);
    }
  }),
);

/**
 * The sandbox's fault rules (`POST`, `GET`, `DELETE /__sandbox/faults` on the sandbox BFF), reached
 * through the dev-only forwarder. Not tied to the session: faults stay across logins until cleared.
 */
const FAULTS_PATH = '/api/dev/proxy/__sandbox/faults';

interface FaultView {
  id: number;
  kind: 'slow' | 'hang' | 'fail' | 'answer';
  method?: string;
  path: string;
  delayMs?: number;
  status?: number;
  answer?: 'compressed' | 'truncated' | 'empty' | 'drifted';
  coding?: string;
  field?: string;
  hits: number;
  held: number;
}

function describeFault(rule: FaultView): string {
  const what =
    rule.kind === 'hang'
      ? 'hangs'
      : rule.kind === 'slow'
        ? `slow, ${rule.delayMs ?? 0} ms`
        : rule.kind === 'answer'
          ? `answers ${rule.answer === 'compressed' ? `compressed (${rule.coding ?? 'gzip'}, not asked for)` : rule.answer === 'drifted' ? `drifted (${rule.field ?? '?'})` : rule.answer}`
          : `fails ${rule.status ?? '?'}${rule.delayMs ? ` after ${rule.delayMs} ms` : ''}`;
  return `${rule.method ?? 'any method'} ${rule.path}: ${what} (hits ${rule.hits}, held now ${rule.held})`;
}

function showFaultResult(text: string, kind: 'ok' | 'error' | ''): void {
  const out = $('fault-result');
  out.textContent = text;
  out.className = kind;
}

async function loadFaults(): Promise<void> {
  try {
    const answer = await client.request<{ rules?: FaultView[] }>('GET', FAULTS_PATH);
    const rules = Array.isArray(answer?.rules) ? answer.rules : [];
    $('fault-list').replaceChildren(
      ...rules.map((rule) => {
        const item = document.createElement('li');
        item.textContent = describeFault(rule);
        item.dataset.kind = rule.kind;
        return item;
      }),
    );
    document.body.dataset.faults = String(rules.length);
  } catch (error) {
    showFaultResult(`Cannot read the sandbox faults (is the proxy using the sandbox?): ${describeError(error)}`, 'error');
  }
}

/** The fault kinds of the form that spoil the real answer, and the rule each posts (sandbox `answer` rules). */
const ANSWER_KINDS: Readonly<Record<string, { answer: 'compressed' | 'truncated' | 'empty' | 'drifted'; coding?: 'gzip' | 'br' }>> = {
  'compressed-gzip': { answer: 'compressed', coding: 'gzip' },
  'compressed-br': { answer: 'compressed', coding: 'br' },
  truncated: { answer: 'truncated' },
  empty: { answer: 'empty' },
  drifted: { answer: 'drifted' },
};

function syncFaultDelay(): void {
  $<HTMLInputElement>('fault-delay').disabled = $<HTMLSelectElement>('fault-kind').value !== 'slow';
  $<HTMLInputElement>('fault-field').disabled = $<HTMLSelectElement>('fault-kind').value !== 'drifted';
}

async function changeFaults(action: () => Promise<string>): Promise<void> {
  const buttons = ['fault-apply', 'fault-clear', 'fault-clear-all'].map((id) => $<HTMLButtonElement>(id));
  for (const button of buttons) button.disabled = true;
  try {
    const done = await action();
    showFaultResult(done, 'ok');
    log(done);
  } catch (error) {
    showFaultResult(describeError(error), 'error');
  } finally {
    for (const button of buttons) button.disabled = false;
  }
  await loadFaults();
}

$('fault-kind').addEventListener('change', syncFaultDelay);

$('fault-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const path = $<HTMLInputElement>('fault-path').value.trim();
  const kind = $<HTMLSelectElement>('fault-kind').value;
  const delayMs = Number($<HTMLInputElement>('fault-delay').value);
  const answer = ANSWER_KINDS[kind];
  const field = $<HTMLInputElement>('fault-field').value.trim();
  const body =
    kind === 'hang'
      ? { path, hang: true }
      : kind === 'fail'
        ? { path, status: 503, body: { message: 'Service Unavailable (sandbox fault)' } }
        : answer !== undefined
          ? { path, ...answer, ...(answer.answer === 'drifted' ? { field } : {}) }
          : { path, delayMs };
  void changeFaults(async () => {
    await client.request('POST', FAULTS_PATH, { body });
    if (answer?.answer === 'drifted') return `${path} now answers with ${field} drifted`;
    if (answer !== undefined)
      return `${path} now answers ${answer.answer === 'compressed' ? `${answer.coding}-compressed without being asked` : answer.answer}`;
    return kind === 'slow'
      ? `${path} now answers after ${delayMs} ms`
      : kind === 'hang'
        ? `${path} now hangs`
        : `${path} now fails with 503`;
  });
});

$('fault-clear').addEventListener('click', () => {
  const path = $<HTMLInputElement>('fault-path').value.trim();
  void changeFaults(async () => {
    const answer = await client.request<{ removed?: number; released?: number }>('DELETE', FAULTS_PATH, { query: { path } });
    return `cleared ${answer?.removed ?? 0} fault(s) of ${path}; ${answer?.released ?? 0} held request(s) released`;
  });
});

$('fault-clear-all').addEventListener('click', () => {
  void changeFaults(async () => {
    const answer = await client.request<{ removed?: number; released?: number }>('DELETE', FAULTS_PATH);
    return `cleared ${answer?.removed ?? 0} fault(s); ${answer?.released ?? 0} held request(s) released`;
  });
});

$('fault-refresh').addEventListener('click', () => {
  void loadFaults();
});

$('refresh-now').addEventListener(
  'click',
  handled(async () => {
    try {
      await client.auth.refresh();
      log('token refreshed');
    } catch (error) {
      log(`refresh failed: ${describeError(error)}`);
    }
    renderRefreshState();
  }),
);

// Start: show what the client believes, and check the session when it believes it has one.
showSession(client.hasSession);
renderRefreshState();
syncFaultDelay();
void loadFaults();
setInterval(renderRefreshState, 5000);
document.body.dataset.ready = 'true';
log(`playground ready; lock ${driver.lockKind}`);
if (client.hasSession) void loadAccount();
