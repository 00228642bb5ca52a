// The value recorded for each published code in packages/browser/src/errors/codes.lock.json (spec 7.1).
// An EP code's value is its method(s) and path pattern; an EM code's value is its statuses,
// the match column and the meaning column of spec 7.3. The row's prose (EP meaning, EM user
// message) and the list of searched words are not part of the value: they may be improved
// as long as the code keeps its meaning.
import { type EndpointEntry, type ErrorEntry, formatMethods } from '../../src/errors/index.js';

export function endpointLockValue(e: EndpointEntry): string {
  return `${formatMethods(e.methods)} ${e.path ?? '(no pattern: unrecognised URL)'}`;
}

export function errorLockValue(e: ErrorEntry): string {
  const statuses = e.statuses === 'any' ? 'any' : e.statuses.join(',');
  return `${statuses} | ${e.match} | ${e.meaning}`;
}
