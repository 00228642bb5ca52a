/**
 * The scenario families, in the table's order: the runner plans, measures and checks them in this
 * order. A new family is a module of this folder added here.
 *
 * @module
 */
import type { ScenarioFamily } from '../harness.js';
import { catalogue } from './catalogue.js';
import { contract } from './contract.js';
import { money } from './money.js';
import { passthrough } from './passthrough.js';
import { refusals } from './refusals.js';
import { state } from './state.js';
import { streams } from './streams.js';
import { tracing } from './tracing.js';
import { workers } from './workers.js';

export const FAMILIES: readonly ScenarioFamily[] = [passthrough, money, catalogue, refusals, state, tracing, contract, workers, streams];
