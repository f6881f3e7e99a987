/**
 * No raw identity field, webhook secret, token or API key reaches a log line, whatever fails. The real failure first: a
 * report whose insert the database refuses (PGlite puts the statement's parameters on its error, PostgreSQL quotes the
 * failing row in its detail), logged by the service's own logger into a captured stream. Then the rules themselves.
 */
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from './support/databases';
import { createRestService, type RestService } from './support/rest-harness';
import { connectApiTrigger, insertApiFlow, signedReport } from './support/fixtures';
import { REDACTED, serializeError, serviceLoggerOptions } from '../../src/server/logging';

const SECRET = 'whsec_logtest_5ecret_00000000000000000';
const EMAIL = 'ada.lovelace.private@example.org';
const PHONE = '+44 20 7946 0958';
const FIRST_NAME = 'Augusta-Ada-Private';
const LAST_NAME = 'King-Lovelace-Private';
const TOKEN = 'LogTestCorrelTokn_0001';

/** A pino destination that keeps every line. */
function capture(): { stream: Writable; lines: string[]; text(): string } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  return { stream, lines, text: () => lines.join('\n') };
}

describe.each(DATABASE_KINDS)('logs on $name when a report cannot be stored', (kind) => {
  let svc: RestService;
  const log = capture();

  beforeAll(async () => {
    svc = await createRestService(kind, {}, { level: 'debug', stream: log.stream });
    await connectApiTrigger(svc.db, svc.site, SECRET);
    await insertApiFlow(svc.db, svc.site, { triggerKey: 'signup' });
    // Every new report is refused, as a full disk or a broken migration would: the insert fails inside the database.
    await svc.db.exec('alter table reports add constraint cnv_test_refuses_reports check (false) not valid');
  });
  afterAll(() => svc?.close());

  it('answers 500 and logs the database error without the email, names, phone, token, secret or API key', async () => {
    const body = {
      correlation_token: TOKEN, customer_event_id: 'user_log_1', email: EMAIL, phone: PHONE,
      first_name: FIRST_NAME, last_name: LAST_NAME, allow_uncorrelated: true,
    };
    const res = await svc.app.inject(signedReport(svc.site.site_key, 'signup', body, SECRET));
    expect(res.statusCode).toBe(500);

    const errors = log.lines.map((line) => JSON.parse(line) as { level: number; err?: Record<string, unknown> }).filter((l) => l.err);
    expect(errors.length).toBeGreaterThan(0);
    // What failed is still there: the SQLSTATE and the constraint's name.
    expect(errors.map((l) => l.err)).toContainEqual(expect.objectContaining({ code: '23514', constraint: 'cnv_test_refuses_reports' }));
    for (const { err } of errors) {
      for (const dropped of ['params', 'parameters', 'query', 'detail', 'where', 'internalQuery', 'hint', 'queryOptions']) {
        expect(err, dropped).not.toHaveProperty(dropped);
      }
    }
    const text = log.text();
    for (const secret of [EMAIL, 'ada.lovelace.private', PHONE, FIRST_NAME, LAST_NAME, TOKEN, SECRET, svc.apiKey]) {
      expect(text).not.toContain(secret);
    }
  });
});

describe('the error serializer', () => {
  /** An error shaped like pg's DatabaseError with PGlite's additions (query, params), as a failed insert throws it. */
  function databaseError(message: string, fields: Record<string, unknown>): Error {
    return Object.assign(new Error(message), { name: 'error', severity: 'ERROR', ...fields });
  }

  it('keeps the SQLSTATE and schema names, drops what the statement carried', () => {
    const error = databaseError('duplicate key value violates unique constraint "reports_site_id_customer_event_id_key"', {
      code: '23505', table: 'reports', constraint: 'reports_site_id_customer_event_id_key',
      detail: `Key (site_id, customer_event_id)=(site_1, ${EMAIL}) already exists.`,
      where: `JSON data, line 1: [{"email":"${EMAIL}"`,
      internalQuery: `select '${EMAIL}'`, hint: EMAIL,
      query: 'insert into reports select * from json_to_recordset($1::json)', params: [`[{"email":"${EMAIL}"}]`],
      queryOptions: { parsers: {} }, parameters: [EMAIL],
    });
    const out = serializeError(error) as Record<string, unknown>;
    expect(out).toMatchObject({
      type: 'error', code: '23505', severity: 'ERROR', table: 'reports', constraint: 'reports_site_id_customer_event_id_key',
      message: 'duplicate key value violates unique constraint "reports_site_id_customer_event_id_key"',
    });
    expect(JSON.stringify(out)).not.toContain(EMAIL);
    expect(Object.keys(out).sort()).toEqual(['code', 'constraint', 'message', 'severity', 'stack', 'table', 'type']);
  });

  it('replaces a value PostgreSQL or JSON.parse quotes in the message, in the stack too, and in a cause', () => {
    const inner = databaseError(`invalid input syntax for type uuid: "${EMAIL}"`, { code: '22P02' });
    let parseError: unknown;
    try {
      JSON.parse(`${EMAIL} is not json`);
    } catch (error) {
      parseError = error;
    }
    const outer = new Error('report insert failed', { cause: inner });
    for (const error of [inner, parseError, outer, new AggregateError([inner], 'several')]) {
      const text = JSON.stringify(serializeError(error));
      expect(text).not.toContain(EMAIL);
      expect(text).not.toContain('ada.lovelace');
    }
    expect(serializeError(inner)).toMatchObject({ message: `invalid input syntax for type uuid: "${REDACTED}"`, code: '22P02' });
    expect(serializeError(outer)).toMatchObject({ message: 'report insert failed', cause: { code: '22P02' } });
  });

  it('redacts secrets, tokens and identity fields logged under their names, one level down too', async () => {
    const log = capture();
    const { default: Fastify } = await import('fastify');
    const app = Fastify({ logger: serviceLoggerOptions({ level: 'info', stream: log.stream }) });
    app.log.info({ email: EMAIL, webhook_secret: SECRET, report: { correlationToken: TOKEN, identity: { email: EMAIL } }, api_key: 'cnv_live_k' }, 'x');
    app.log.error({ error: databaseError(`bad "${EMAIL}"`, { detail: EMAIL }) }, 'y');
    await app.close();
    const text = log.text();
    for (const secret of [EMAIL, SECRET, TOKEN, 'cnv_live_k']) expect(text).not.toContain(secret);
    expect(text).toContain(REDACTED);
  });
});
