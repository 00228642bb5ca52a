/**
 * Base paths of the sandbox external services on the external server (see `index.ts` for the table
 * of services and their configuration variables).
 *
 * @module
 */

/** Base paths of the external services on the external server. */
export const EXTERNAL_PATHS = Object.freeze({
  referralV1: '/referral-v1',
  referralV2: '/referral-v2',
  ftdCashbackVerify: '/ftd-cashback/verify',
  ftdCashbackSend: '/ftd-cashback/send',
  attributionS2s: '/attribution/s2s',
  cachePurge: '/cache/purge',
} as const);
