/**
 * Sportsbook endpoints of the sandbox BFF (spec 4.7 "Upstream" column): search, launches, partner
 * tokens and a few `/core-sportbook/*` sub-paths for the raw passthrough.
 *
 * | endpoint | answer |
 * |---|---|
 * | `GET /core-sportbook/search?search=` | `{ data: events }` whose teams, league or sport match (case-insensitive) |
 * | `GET /core-sportbook/launch` (session) | `{ url, token, expires_in }` plus a `debug` field the proxy removes |
 * | `GET /core-sportbook/anonymous-launch` | `{ url }` |
 * | `POST /sportsbook-partner-a/get-jwt` (session) | `{ jwt, expires_in }` |
 * | `GET /sportsbook-partner-b/token` (session) | `{ token, expires_in }` |
 * | `GET /core-sportbook/sports` | `{ data: sports }` |
 * | `GET /core-sportbook/events` | `{ data: events }`, query `sport`, `live` (`1`) |
 * | `GET /core-sportbook/events/{id}` | `{ data: event }`, 404 `event_not_found` |
 * | `GET /core-sportbook/leagues/{sport}` | `{ data: leagues }` |
 * | `GET /core-sportbook/odds.csv` | a CSV (`text/csv`), to show that non-JSON bodies pass through |
 *
 * @module
 */
import { randomBytes } from 'node:crypto';
import type { SandboxArea } from '../context.js';
import { asRecord, sendError } from '../http.js';
import { withUser } from './guard.js';

/** Sports of the sandbox sportsbook. */
export const SPORTS = Object.freeze([
  { slug: 'football', name: 'Football' },
  { slug: 'basketball', name: 'Basketball' },
  { slug: 'tennis', name: 'Tennis' },
  { slug: 'volleyball', name: 'Volleyball' },
]);

const TEAMS: Readonly<Record<string, readonly string[]>> = {
  football: ['Rio Tigers', 'Sao Paulo Owls', 'Lima Condors', 'Santiago Foxes', 'Recife Sharks', 'Porto Alegre Bulls'],
  basketball: ['Mexico City Comets', 'Bogota Hawks', 'Quito Falcons', 'Curitiba Bears'],
  tennis: ['A. Silva', 'M. Torres', 'J. Costa', 'L. Rojas'],
  volleyball: ['Salvador Waves', 'Belem Storm', 'Natal Suns', 'Manaus Jaguars'],
};

interface SportEvent {
  id: number;
  sport: string;
  league: string;
  home: string;
  away: string;
  starts_at: string;
  live: boolean;
  odds: { home: number; draw: number | null; away: number };
}

function buildEvents(): SportEvent[] {
  const events: SportEvent[] = [];
  let id = 50_001;
  for (const sport of SPORTS) {
    const teams = TEAMS[sport.slug] ?? [];
    for (let i = 0; i + 1 < teams.length; i += 1) {
      const home = teams[i] as string;
      const away = teams[(i + 1) % teams.length] as string;
      events.push({
        id,
        sport: sport.slug,
        league: `${sport.name} Premier`,
        home,
        away,
        starts_at: new Date(Date.UTC(2026, 5, 1 + (id % 20), 18)).toISOString(),
        live: id % 3 === 0,
        odds: { home: 1.5 + (id % 7) / 10, draw: sport.slug === 'football' ? 3.1 : null, away: 2.2 + (id % 5) / 10 },
      });
      id++;
    }
  }
  return events;
}

const EVENTS = Object.freeze(buildEvents());

/** The sportsbook area of the sandbox BFF. */
export const sportsArea: SandboxArea = {
  name: 'sports',
  register(app) {
    app.get('/core-sportbook/search', async (request) => {
      const term = String(asRecord(request.query).search ?? '')
        .trim()
        .toLowerCase();
      const data =
        term === '' ? [] : EVENTS.filter((e) => [e.home, e.away, e.league, e.sport].some((text) => text.toLowerCase().includes(term)));
      return { data };
    });

    app.get(
      '/core-sportbook/launch',
      withUser(async (_request, _reply, user) => {
        const token = randomBytes(12).toString('hex');
        return {
          url: `https://sportsbook.sandbox.invalid/?token=${token}`,
          token,
          expires_in: 3600,
          debug: { user_id: user.id, upstream_request: { api_key: 'sandbox-sportsbook-key' } },
        };
      }),
    );
    app.get('/core-sportbook/anonymous-launch', async () => ({ url: 'https://sportsbook.sandbox.invalid/?guest=1' }));

    app.post(
      '/sportsbook-partner-a/get-jwt',
      withUser(async (_request, _reply, user) => ({
        jwt: `partner-a.${Buffer.from(JSON.stringify({ sub: user.id })).toString('base64url')}.${randomBytes(8).toString('hex')}`,
        expires_in: 900,
      })),
    );
    app.get(
      '/sportsbook-partner-b/token',
      withUser(async () => ({ token: `pb_${randomBytes(12).toString('hex')}`, expires_in: 900 })),
    );

    app.get('/core-sportbook/sports', async () => ({ data: SPORTS }));
    app.get('/core-sportbook/events', async (request) => {
      const query = asRecord(request.query);
      const data = EVENTS.filter((e) => (query.sport === undefined || e.sport === query.sport) && (query.live !== '1' || e.live));
      return { data };
    });
    app.get<{ Params: { id: string } }>('/core-sportbook/events/:id', async (request, reply) => {
      const event = EVENTS.find((e) => String(e.id) === request.params.id);
      return event ? { data: event } : sendError(reply, 404, 'event_not_found', 'Event not found');
    });
    app.get<{ Params: { sport: string } }>('/core-sportbook/leagues/:sport', async (request, reply) => {
      const sport = SPORTS.find((s) => s.slug === request.params.sport);
      if (!sport) return sendError(reply, 404, 'sport_not_found', 'Sport not found');
      return { data: [{ slug: `${sport.slug}-premier`, name: `${sport.name} Premier` }] };
    });
    app.get('/core-sportbook/odds.csv', async (_request, reply) => {
      const lines = ['id,home,away,odds_home,odds_away', ...EVENTS.map((e) => `${e.id},${e.home},${e.away},${e.odds.home},${e.odds.away}`)];
      return reply.type('text/csv; charset=utf-8').send(`${lines.join('\n')}\n`);
    });
  },
};
