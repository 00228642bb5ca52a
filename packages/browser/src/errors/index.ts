/**
 * The isomorphic error-reference module (spec part 7), published as `@front-proxy/browser/errors`
 * (and re-exported as the server's `./errors`): the EP and EM
 * registries as data, the classifier and the reference-code helpers. Runs in Node and in the
 * browser: no Node built-ins, no dependencies.
 *
 * @example
 * import { classifyError, explainRef } from '@front-proxy/browser/errors';
 * const { ref } = classifyError({ status: 401, data: { reason: 'token_expired' }, url: '/auth/user-profile' });
 * // ref === 'EP0003-EM0003'
 * explainRef(ref).error.message; // 'Your session has expired. Please log in again.'
 *
 * @module
 */

export {
  API_FALLBACK_ENDPOINT_CODE,
  ENDPOINT_CODES,
  ENDPOINT_GROUPS,
  ENDPOINT_LIST,
  type EndpointCode,
  type EndpointEntry,
  type EndpointGroup,
  type EndpointGroupKey,
  type EndpointRow,
  endpointGroupOf,
  formatMethods,
  getEndpoint,
  type HttpMethod,
  isEndpointCode,
  UNKNOWN_ENDPOINT_CODE,
} from './endpoint-codes.js';
export {
  ERROR_CODES,
  ERROR_GROUPS,
  ERROR_LIST,
  type ErrorCode,
  type ErrorEntry,
  type ErrorGroupKey,
  type ErrorRow,
  FALLBACK_ERROR_CODE,
  getError,
  isErrorCode,
  isSessionEndingErrorCode,
  SESSION_FALLBACK_ERROR_CODE,
} from './error-codes.js';
export {
  type ClassifyErrorInput,
  classifyError,
  classifyProxyError,
  type ErrorClassification,
  endpointCodeFor,
  errorCodeForReason,
  extractReason,
  MAX_REASON_LENGTH,
  normalizeEndpointPath,
  proxyEndpointCodeFor,
  type UrlInput,
} from './classify.js';
export { PROXY_ENDPOINT_CODES } from './proxy-endpoint-codes.js';
export {
  type EndpointCodeText,
  type ErrorCodeText,
  type ErrorRef,
  explainRef,
  formatRef,
  type KnownEndpoint,
  type KnownError,
  type ParsedRef,
  parseRef,
  type RefExplanation,
  type UnknownCode,
} from './ref.js';
