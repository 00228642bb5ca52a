/**
 * Contact and identity validation endpoints of the sandbox BFF (spec 4.2 "Upstream" column; the
 * paths keep the BFF's spelling `validade-*`).
 *
 * | upstream | behaviour |
 * |---|---|
 * | `POST /bff/users/send-email`, `POST /bff/users/send-sms` | `{ message, sent_to }` (masked); the code is always {@link SANDBOX_VALIDATION_CODE} |
 * | `POST /bff/users/validade-email-code`, `POST /bff/users/validade-sms-code` | `{ code }` → `{ valid: true }` and `validate_email_at` / `validate_sms_at` set; 422 `invalid_code` |
 * | `PATCH /bff/users/self-email` | `{ email }` → changes it and clears `validate_email_at`; 422 `email_taken`, `validation_error` |
 * | `PATCH /bff/users/self-phone` | `{ phone, ddi? }` → changes it and clears `validate_sms_at` |
 * | `PATCH /bff/users/add-initial-data` | name, birth_date, gender, mother_name, number (document) → the profile |
 * | `PATCH /bff/users/add-address` | the address fields → `{ address }` |
 * | `PATCH /bff/users/self-contracts` | `{ tc?, privacy?, lgpd?, law?, mkt? }` (true = accept now) → `{ userInfo }` |
 * | `POST /bff/validate-confirmation` | `{ token }`: a token starting with `confirm-` validates the e-mail; 422 `invalid_link` |
 * | `POST /apicep` | no session; `{ cep }` → the address; 404 `cep_not_found` for `00000000`, 422 for a malformed CEP |
 *
 * @module
 */
import type { SandboxArea } from '../context.js';
import { asRecord, checkFields, sendError, sendValidationError } from '../http.js';
import { defineUserState } from '../store.js';
import { withUser } from './guard.js';

/** The verification code the sandbox accepts for e-mail and SMS. */
export const SANDBOX_VALIDATION_CODE = '123456';

/** Address fields kept by `add-address` (and `update-address` of the user area). */
export const ADDRESS_FIELDS = ['cep', 'street', 'number', 'complement', 'neighborhood', 'city', 'state', 'country'] as const;

/** The user's address (per-user state shared with the user area). */
export const addressState = defineUserState('address', (): { address: Record<string, unknown> | null } => ({ address: null }));

const KNOWN_CEPS: Readonly<Record<string, Record<string, string>>> = {
  '01310100': { street: 'Avenida Paulista', neighborhood: 'Bela Vista', city: 'São Paulo', state: 'SP' },
  '20040002': { street: 'Avenida Rio Branco', neighborhood: 'Centro', city: 'Rio de Janeiro', state: 'RJ' },
};

const CONTRACTS = {
  tc: 'tc_accepted_at',
  privacy: 'privacy_accepted_at',
  lgpd: 'lgpd_accepted_at',
  law: 'law_accepted_at',
  mkt: 'mkt_accepted_at',
} as const;

/** The validation area of the BFF. */
export const validationArea: SandboxArea = {
  name: 'validation',
  register(app, ctx) {
    const { store } = ctx;
    const nowIso = () => new Date(store.now()).toISOString();

    app.post(
      '/bff/users/send-email',
      withUser(async (_request, _reply, user) => ({
        message: 'Verification code sent',
        sent_to: user.profile.email.replace(/^(.).*(@.*)$/, '$1***$2'),
      })),
    );
    app.post(
      '/bff/users/send-sms',
      withUser(async (_request, _reply, user) => ({
        message: 'Verification code sent',
        sent_to: `+${user.profile.ddi} ***${user.profile.phone.slice(-4)}`,
      })),
    );
    for (const [path, field] of [
      ['/bff/users/validade-email-code', 'validate_email_at'],
      ['/bff/users/validade-sms-code', 'validate_sms_at'],
    ] as const) {
      app.post(
        path,
        withUser(async (request, reply, user) => {
          const code = asRecord(request.body).code;
          if (String(code ?? '') !== SANDBOX_VALIDATION_CODE) return sendError(reply, 422, 'invalid_code', 'The code is invalid.');
          user.info[field] = nowIso();
          return { valid: true, [field]: user.info[field] };
        }),
      );
    }

    app.patch(
      '/bff/users/self-email',
      withUser(async (request, reply, user) => {
        const checked = checkFields(request.body, { email: 'string' });
        if (!checked.ok) return sendValidationError(reply, checked.errors);
        const email = checked.value.email.trim();
        if (!/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(email))
          return sendValidationError(reply, { email: ['The email must be a valid email address.'] });
        const owner = store.findUserByEmail(email);
        if (owner && owner.id !== user.id) return sendError(reply, 422, 'email_taken', 'The email has already been taken.');
        user.profile.email = email;
        user.info.validate_email_at = '';
        return { message: 'E-mail changed', email };
      }),
    );

    app.patch(
      '/bff/users/self-phone',
      withUser(async (request, reply, user) => {
        const checked = checkFields(request.body, { phone: 'string', ddi: 'string?' });
        if (!checked.ok) return sendValidationError(reply, checked.errors);
        user.profile.phone = checked.value.phone;
        if (checked.value.ddi) user.profile.ddi = checked.value.ddi;
        user.info.validate_sms_at = '';
        return { message: 'Phone changed', ddi: user.profile.ddi, phone: user.profile.phone };
      }),
    );

    app.patch(
      '/bff/users/add-initial-data',
      withUser(async (request, reply, user) => {
        const checked = checkFields(request.body, {
          name: 'string?',
          birth_date: 'string?',
          gender: 'number?',
          mother_name: 'string?',
          number: 'string?',
        });
        if (!checked.ok) return sendValidationError(reply, checked.errors);
        const { name, birth_date, gender, mother_name, number } = checked.value;
        if (name) {
          const [first = name, ...rest] = name.trim().split(/\s+/);
          Object.assign(user.profile, { name: name.trim(), first_name: first, last_name: rest.join(' ') });
        }
        if (birth_date) user.profile.birth_date = birth_date;
        if (gender !== undefined) user.profile.gender = gender;
        if (mother_name) user.profile.mother_name = mother_name;
        if (number && user.profile.document === null) {
          user.profile.document = {
            id: user.id * 10 + 1,
            type: user.profile.country === 'BR' ? 'cpf' : 'national_id',
            number: number.replace(/\D/g, ''),
            country: user.profile.country,
            verified: false,
            verified_at: null,
          };
        }
        return { message: 'Data saved', user: user.profile };
      }),
    );

    app.patch(
      '/bff/users/add-address',
      withUser(async (request, _reply, user) => {
        const body = asRecord(request.body);
        const address = Object.fromEntries(ADDRESS_FIELDS.filter((f) => body[f] !== undefined).map((f) => [f, body[f]]));
        store.userState(addressState, user).address = address;
        return { message: 'Address saved', address };
      }),
    );

    app.patch(
      '/bff/users/self-contracts',
      withUser(async (request, _reply, user) => {
        const body = asRecord(request.body);
        for (const [key, field] of Object.entries(CONTRACTS)) if (body[key] === true) user.info[field] = nowIso();
        return { message: 'Contracts accepted', userInfo: user.info };
      }),
    );

    app.post(
      '/bff/validate-confirmation',
      withUser(async (request, reply, user) => {
        const token = asRecord(request.body).token;
        if (typeof token !== 'string' || !token.startsWith('confirm-'))
          return sendError(reply, 422, 'invalid_link', 'The link is invalid or has expired.');
        user.info.validate_email_at = nowIso();
        return { valid: true, validate_email_at: user.info.validate_email_at };
      }),
    );

    app.post('/apicep', async (request, reply) => {
      const cep = String(asRecord(request.body).cep ?? '').replace(/\D/g, '');
      if (!/^[0-9]{8}$/.test(cep)) return sendValidationError(reply, { cep: ['The cep must have 8 digits.'] });
      if (cep === '00000000') return sendError(reply, 404, 'cep_not_found', 'Postal code not found.');
      const known = KNOWN_CEPS[cep] ?? { street: 'Rua Exemplo', neighborhood: 'Centro', city: 'São Paulo', state: 'SP' };
      return { cep: `${cep.slice(0, 5)}-${cep.slice(5)}`, ...known, country: 'BR' };
    });
  },
};
