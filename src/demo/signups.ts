/**
 * The demo store's own backend logic: create the user account, then report the signup to cnv through the Node client,
 * exactly as a customer's backend would. Users live in memory: this is a pretend store, not a real one.
 */
import { randomBytes } from 'node:crypto';
import { createCnvClient, readCorrelationToken, type CnvClient, type ReportSignupResult, type RequestLike } from '../client/index';

/** One signup of the demo store and what the report to cnv answered. */
export interface Signup {
  /** The new user's id: also the report's customer_event_id. */
  id: string;
  email: string;
  name: string;
  createdAt: Date;
  /** The correlation token the signup request carried in its cookie, or null. */
  correlationToken: string | null;
  /** What reporting to cnv came to; null while the report is on its way. */
  report: ReportSignupResult | null;
  /** Set when the report could not even be attempted (a bug, not an outcome the client reports). */
  reportError: string | null;
}

/** What the store's backend was configured with (a real customer copies these from cnv). */
export interface ReporterConfig {
  webhookBaseUrl: string;
  siteKey: string;
  triggerKey: string;
  webhookSecret: string;
}

export interface SignupInput {
  email: string;
  name: string;
  /** The incoming signup request: its Cookie header carries the correlation token. */
  request: RequestLike;
}

/** How many signups the demo remembers; older ones are forgotten. */
const REMEMBERED = 500;

/** A new user id, as the store's database would assign it. */
export function newUserId(): string {
  return `usr_${randomBytes(9).toString('base64url')}`;
}

/** Splits a full name into first and last name (everything after the first space is the last name). */
export function splitName(name: string): { firstName: string | null; lastName: string | null } {
  const parts = name.trim().split(/\s+/).filter(Boolean);
  if (parts.length === 0) return { firstName: null, lastName: null };
  return { firstName: parts[0]!, lastName: parts.length > 1 ? parts.slice(1).join(' ') : null };
}

/** Checks the signup form; a message for the visitor when it is not acceptable. */
export function checkSignupForm(fields: { email?: unknown; name?: unknown }): { email: string; name: string } | { error: string } {
  const email = typeof fields.email === 'string' ? fields.email.trim() : '';
  const name = typeof fields.name === 'string' ? fields.name.trim() : '';
  if (!/^[^\s@]+@[^\s@]+$/.test(email) || email.length > 200) return { error: 'Please enter a valid email address.' };
  if (name.length === 0 || name.length > 200) return { error: 'Please enter your name.' };
  return { email, name };
}

/** The demo store's signups: creates users and reports each signup to cnv. */
export class SignupDesk {
  private readonly signups = new Map<string, Signup>();
  private readonly client: Pick<CnvClient, 'reportSignup'>;

  constructor(config: ReporterConfig, client?: Pick<CnvClient, 'reportSignup'>) {
    this.client =
      client ??
      createCnvClient({
        webhookBaseUrl: config.webhookBaseUrl,
        siteKey: config.siteKey,
        triggerKey: config.triggerKey,
        secret: config.webhookSecret,
      });
  }

  /**
   * Creates the user and starts reporting the signup, without waiting for it (as docs/backend.md advises: the
   * visitor should not wait for cnv). `reported` settles once cnv answered or the client gave up.
   */
  signUp(input: SignupInput): { signup: Signup; reported: Promise<Signup> } {
    const id = newUserId();
    const { firstName, lastName } = splitName(input.name);
    const signup: Signup = {
      id,
      email: input.email,
      name: input.name,
      createdAt: new Date(),
      correlationToken: readCorrelationToken(input.request),
      report: null,
      reportError: null,
    };
    this.signups.set(id, signup);
    if (this.signups.size > REMEMBERED) this.signups.delete(this.signups.keys().next().value!);
    const reported = this.client
      .reportSignup({ request: input.request, customerEventId: id, email: input.email, firstName, lastName })
      .then(
        (report) => {
          signup.report = report;
          return signup;
        },
        (error: unknown) => {
          signup.reportError = error instanceof Error ? error.message : String(error);
          return signup;
        },
      );
    return { signup, reported };
  }

  /** A remembered signup, or null. */
  find(id: string): Signup | null {
    return this.signups.get(id) ?? null;
  }
}
