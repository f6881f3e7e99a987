/**
 * The demo store's own backend logic: create the user account, then report the signup to cnv through the Node client,
 * exactly as a customer's backend would; later, the upgrade to the paid plan (a later stage, reported with the
 * customer's id only) and its refund (a retraction). Users live in memory: this is a pretend store, not a real one.
 */
import { randomBytes } from 'node:crypto';
import {
  createCnvClient,
  readCorrelationToken,
  type AdjustConversionResult,
  type CnvClient,
  type ReportConversionResult,
  type ReportSignupResult,
  type RequestLike,
} from '../client/index';

/** A report the store's backend made after the signup: on its way (`result` null), answered, or not possible. */
export interface LaterReport<R> {
  /** The report's own id: the stage's customer_event_id, or the refund's adjustment_id. */
  id: string;
  at: Date;
  result: R | null;
  /** Set when the report could not even be attempted. */
  error: string | null;
}

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
  /** The upgrade to the paid plan, reported as the later stage `paidStage.key`; null until the user upgrades. */
  upgrade: LaterReport<ReportConversionResult> | null;
  /** The refund of the paid plan, reported as a retraction of the upgrade; null until the user asks for it. */
  refund: LaterReport<AdjustConversionResult> | null;
}

/** The paid plan: the later stage's trigger key and what it is worth. */
export interface PaidStage {
  key: string;
  value: number;
  currency: string;
}

/** Why an upgrade or a refund cannot be made now, in words for the visitor. */
export class PlanChangeRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PlanChangeRefused';
  }
}

/** The customer_event_id of a user's paid-plan stage (the store's id of the payment). */
export function paidEventId(userId: string): string {
  return `${userId}.paid`;
}

/** The adjustment_id of the refund of a user's paid plan. */
export function refundId(userId: string): string {
  return `${userId}.refund`;
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

/** The signup form's fields a visitor can get wrong, each with its message. */
export type SignupFormErrors = Partial<Record<'email' | 'name', string>>;

/** Checks the signup form; a message for the visitor for each field that is not acceptable (all of them at once). */
export function checkSignupForm(fields: { email?: unknown; name?: unknown }): { email: string; name: string } | { errors: SignupFormErrors } {
  const email = typeof fields.email === 'string' ? fields.email.trim() : '';
  const name = typeof fields.name === 'string' ? fields.name.trim() : '';
  const errors: SignupFormErrors = {};
  if (!/^[^\s@]+@[^\s@]+$/.test(email) || email.length > 200) errors.email = 'Please enter a valid email address.';
  if (name.length === 0 || name.length > 200) errors.name = 'Please enter your name.';
  return errors.email || errors.name ? { errors } : { email, name };
}

/** The demo store's signups: creates users and reports each signup to cnv. */
export class SignupDesk {
  private readonly signups = new Map<string, Signup>();
  private readonly client: CnvClient;

  constructor(
    config: ReporterConfig,
    readonly paidStage: PaidStage,
    client?: CnvClient,
  ) {
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
      upgrade: null,
      refund: null,
    };
    this.signups.set(id, signup);
    if (this.signups.size > REMEMBERED) this.signups.delete(this.signups.keys().next().value!);
    const reported = this.client
      // The user id is also the customer id: the upgrade, reported later with it alone, finds this signup's click.
      .reportSignup({ request: input.request, customerEventId: id, customerId: id, email: input.email, firstName, lastName })
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

  /**
   * The user upgrades to the paid plan: the backend reports the later stage with the customer id (no cookie, as a
   * billing webhook would), worth the plan's price. Once per user; `reported` settles once cnv answered.
   */
  upgrade(signup: Signup): { reported: Promise<Signup> } {
    if (!signup.report?.ok) throw new PlanChangeRefused('Your signup has not reached cnv yet, so there is no customer to upgrade. Try again in a moment.');
    if (signup.upgrade) throw new PlanChangeRefused('You are already on the paid plan.');
    const upgrade: LaterReport<ReportConversionResult> = { id: paidEventId(signup.id), at: new Date(), result: null, error: null };
    signup.upgrade = upgrade;
    const { key, value, currency } = this.paidStage;
    const { firstName, lastName } = splitName(signup.name);
    const reported = this.client
      .reportConversion(key, { customerEventId: upgrade.id, customerId: signup.id, value, currency, email: signup.email, firstName, lastName })
      .then(
        (result) => ((upgrade.result = result), signup),
        (error: unknown) => ((upgrade.error = error instanceof Error ? error.message : String(error)), signup),
      );
    return { reported };
  }

  /** The user asks for a refund: the backend retracts the paid-plan conversion on every platform. Once per user. */
  refund(signup: Signup): { reported: Promise<Signup> } {
    if (!signup.upgrade?.result?.ok) throw new PlanChangeRefused('There is no payment to refund: upgrade to the paid plan first.');
    if (signup.refund) throw new PlanChangeRefused('This payment has already been refunded.');
    const refund: LaterReport<AdjustConversionResult> = { id: refundId(signup.id), at: new Date(), result: null, error: null };
    signup.refund = refund;
    const reported = this.client.adjustConversion({ adjustmentId: refund.id, customerEventId: signup.upgrade.id, type: 'retract' }).then(
      (result) => ((refund.result = result), signup),
      (error: unknown) => ((refund.error = error instanceof Error ? error.message : String(error)), signup),
    );
    return { reported };
  }

  /** A remembered signup, or null. */
  find(id: string): Signup | null {
    return this.signups.get(id) ?? null;
  }
}
