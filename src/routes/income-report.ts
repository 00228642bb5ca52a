/**
 * spec 4.8 Income report (Brazil): available years, generation for a year, status polling.
 *
 * @module
 */
import { IncomeReportGenerateBody, IncomeReportParams } from '../contracts/account.js';
import { bff, forward, route, type RouteSpec, routeTable } from './route.js';

/** spec 4.8 Income report, in the specification's order. */
export const incomeReportRoutes: readonly RouteSpec[] = routeTable('Income report', [
  route({
    method: 'GET',
    url: '/api/income-report/available-years',
    spec: '4.8',
    summary: 'available years',
    auth: 'required',
    upstream: [bff('GET', '/income-report/available-years')],
    handler: forward(),
  }),
  route({
    method: 'POST',
    url: '/api/income-report/generate',
    spec: '4.8',
    summary: 'generate report for a year (`year`)',
    auth: 'required',
    body: IncomeReportGenerateBody,
    upstream: [bff('POST', '/income-report/generate')],
    evictsProfile: false,
    handler: forward(),
  }),
  route({
    method: 'GET',
    url: '/api/income-report/status/:id',
    spec: '4.8',
    summary: 'poll report status',
    auth: 'required',
    params: IncomeReportParams,
    upstream: [bff('GET', '/income-report/{id}')],
    handler: forward(),
  }),
]);
