/**
 * Brazilian CPF numbers: check-digit validation and completion.
 *
 * A CPF has 9 base digits and 2 check digits, each a weighted sum modulo 11. Numbers made of one
 * repeated digit pass the arithmetic but are not issued, so they are rejected.
 *
 * @module
 */

/** Keeps the digits of `value` (`"529.982.247-25"` → `"52998224725"`). */
export function onlyDigits(value: string): string {
  return value.replace(/\D+/g, '');
}

function checkDigit(digits: string): number {
  let sum = 0;
  const weightStart = digits.length + 1;
  for (let i = 0; i < digits.length; i++) {
    sum += Number(digits[i]) * (weightStart - i);
  }
  const rest = (sum * 10) % 11;
  return rest === 10 ? 0 : rest;
}

/**
 * Whether `value` is a valid CPF (punctuation allowed).
 *
 * @example isValidCpf('529.982.247-25') // true
 */
export function isValidCpf(value: string): boolean {
  const digits = onlyDigits(value);
  if (digits.length !== 11 || /^(\d)\1{10}$/.test(digits)) return false;
  const first = checkDigit(digits.slice(0, 9));
  const second = checkDigit(digits.slice(0, 10));
  return digits[9] === String(first) && digits[10] === String(second);
}

/**
 * Appends the two check digits to a 9-digit base.
 *
 * @throws {RangeError} when `base` is not 9 digits.
 * @example completeCpf('529982247') // '52998224725'
 */
export function completeCpf(base: string): string {
  if (!/^\d{9}$/.test(base)) throw new RangeError('a CPF base has 9 digits');
  const first = checkDigit(base);
  return `${base}${first}${checkDigit(`${base}${first}`)}`;
}
