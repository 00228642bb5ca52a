/**
 * Income report endpoints of the sandbox BFF (spec 4.8 "Upstream" column).
 *
 * | upstream | behaviour |
 * |---|---|
 * | `GET /income-report/available-years` | `{ years }`: every calendar year from the account's creation to last year, newest first |
 * | `POST /income-report/generate` | `{ year }` → 202 `{ id, year, status: "processing" }`; 422 `year_not_available` |
 * | `GET /income-report/{id}` | `{ id, year, status }`: `processing`, then `ready` with `download_url` from the {@link READY_AFTER_POLLS}th poll on; 404 `report_not_found` |
 *
 * @module
 */
import { randomBytes } from 'node:crypto';
import type { SandboxArea } from '../context.js';
import { asRecord, sendError, sendValidationError } from '../http.js';
import { defineUserState, type SandboxStore } from '../store.js';
import type { SandboxUser } from '../types.js';
import { withUser } from './guard.js';

/** A report is ready from this status poll on. */
export const READY_AFTER_POLLS = 2;

interface Report {
  id: string;
  year: number;
  status: 'processing' | 'ready';
  polls: number;
  created_at: string;
  download_url: string | null;
}

const reportsState = defineUserState('income-report', () => ({ reports: new Map<string, Report>() }));

function availableYears(user: SandboxUser, store: SandboxStore): number[] {
  const last = new Date(store.now()).getUTCFullYear() - 1;
  const created = new Date(user.profile.created_at);
  const first = Number.isNaN(created.getTime()) ? last : Math.min(created.getUTCFullYear(), last);
  const years: number[] = [];
  for (let y = last; y >= first; y--) years.push(y);
  return years;
}

/** The income report area of the BFF. */
export const incomeReportArea: SandboxArea = {
  name: 'income-report',
  register(app, ctx) {
    const { store } = ctx;
    app.get(
      '/income-report/available-years',
      withUser(async (_request, _reply, user) => ({ years: availableYears(user, store) })),
    );
    app.post(
      '/income-report/generate',
      withUser(async (request, reply, user) => {
        const year = asRecord(request.body).year;
        if (typeof year !== 'number' || !Number.isInteger(year))
          return sendValidationError(reply, { year: ['The year field is required.'] });
        if (!availableYears(user, store).includes(year)) return sendError(reply, 422, 'year_not_available', `No report for ${year}.`);
        const report: Report = {
          id: `ir_${randomBytes(6).toString('hex')}`,
          year,
          status: 'processing',
          polls: 0,
          created_at: new Date(store.now()).toISOString(),
          download_url: null,
        };
        store.userState(reportsState, user).reports.set(report.id, report);
        const { polls: _polls, ...view } = report;
        return reply.code(202).send(view);
      }),
    );
    app.get<{ Params: { id: string } }>(
      '/income-report/:id',
      withUser<{ Params: { id: string } }>(async (request, reply, user) => {
        const report = store.userState(reportsState, user).reports.get(request.params.id);
        if (!report) return sendError(reply, 404, 'report_not_found', 'Report not found.');
        report.polls += 1;
        if (report.status === 'processing' && report.polls >= READY_AFTER_POLLS) {
          report.status = 'ready';
          report.download_url = `https://files.sandbox.example/income-reports/${report.id}.pdf`;
        }
        const { polls: _polls, ...view } = report;
        return view;
      }),
    );
  },
};
