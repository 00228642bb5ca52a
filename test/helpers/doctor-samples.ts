/**
 * A profile's `user` and `userInfo` with every field of spec 2.5's shapes (values made up), for the
 * doctor's tests: the answers a conforming BFF sends, and the same without `user.id`.
 */
export function sampleProfile(id: number) {
  const user = {
    id,
    email: 'a@b.c',
    username: 'a',
    name: 'A',
    first_name: 'A',
    last_name: 'B',
    phone: '1',
    ddi: '55',
    birth_date: '2000-01-01',
    country: 'BR',
    language: 'pt',
    currency: 'BRL',
    token: 't',
    mother_name: 'M',
    created_at: 'x',
    updated_at: 'x',
    last_login: 'x',
    gender: 1,
    document: null,
    country_data: null,
    wallet: null,
    is_active: 1,
    cancelled_account: 0,
    bonus_enabled: 1,
    ftd_date: null,
    ftd_value: 0,
  };
  const userInfo = {
    validate_email_at: 'x',
    login_at: 'x',
    validate_sms_at: 'x',
    login_attempt_qty: 0,
    strong_password: 1,
    seven_days_since_last_login: false,
    force_request_kyc: false,
    two_factor_enabled: false,
  };
  const { id: _id, ...userWithoutId } = user;
  return { user, userInfo, userWithoutId };
}
