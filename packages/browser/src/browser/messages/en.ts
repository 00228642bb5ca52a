/**
 * The English messages (`en`), importable on their own (`@front-proxy/browser/messages/en`): the
 * registry's own columns, the table of a client given no other.
 *
 * @module
 */
export { EN_MESSAGES as en } from '../messages.js';
