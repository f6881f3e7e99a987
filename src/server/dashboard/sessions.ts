/**
 * Signing in to the dashboard: a one-time link (single use, 15 minutes) becomes a session of one account, kept in an
 * HttpOnly cookie. Links and sessions are stored as SHA-256 hashes only. Every form carries the session's CSRF token,
 * derived from the session token (an HMAC), so it needs no storage and changes with each session.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Queryable } from '../db/db';
import type { Settings } from '../settings';
import { hashSecret, newUrlToken } from '../db/ids';
import { deleteSession, findSession, insertSession, insertSignInToken, peekSignInToken, useSignInToken } from './sql';

/** How long a sign-in link works. */
export const SIGN_IN_TTL_MS = 15 * 60 * 1000;
/** How long a session lasts after sign-in. */
export const SESSION_TTL_MS = 7 * 24 * 60 * 60 * 1000;
/** The session cookie, on a dashboard served over plain http (a development machine). */
export const SESSION_COOKIE = 'cnv_dashboard_session';
/**
 * The session cookie over HTTPS: with the `__Host-` prefix, which a browser accepts only from a secure origin, with
 * `Secure`, `Path=/` and no `Domain`. So no other host (a sibling subdomain, a page on plain http of the same name) can
 * set it: none can toss its own session into this dashboard and have the visitor work in, and connect ad platforms to,
 * the wrong account. Over HTTPS only this name is read.
 */
export const SECURE_SESSION_COOKIE = `__Host-${SESSION_COOKIE}`;

/** The session cookie's name for a dashboard reached over HTTPS or not. */
export function sessionCookieName(https: boolean): string {
  return https ? SECURE_SESSION_COOKIE : SESSION_COOKIE;
}
/** Path of the sign-in link. */
export const SIGN_IN_PATH = '/dashboard/sign-in';

/** A fresh one-time sign-in link for an account: the URL (with its token) and when it stops working. */
export async function issueSignInLink(
  db: Queryable,
  settings: Pick<Settings, 'publicUrl'>,
  accountId: string,
  now: Date = new Date(),
  apiKeyId: string | null = null,
): Promise<{ url: string; expiresAt: Date }> {
  const token = newUrlToken();
  const expiresAt = new Date(now.getTime() + SIGN_IN_TTL_MS);
  await insertSignInToken(db, hashSecret(token), accountId, expiresAt, apiKeyId);
  return { url: `${settings.publicUrl}${SIGN_IN_PATH}?token=${token}`, expiresAt };
}

export type SignInResult =
  | { ok: true; sessionToken: string; accountId: string; expiresAt: Date }
  | { ok: false; reason: 'used' | 'expired' | 'unknown' };

/** What a sign-in link would do, without using it: the account it opens (id, name) and until when; or why it cannot. */
export async function signInLinkState(
  db: Queryable,
  token: string,
  now: Date = new Date(),
): Promise<{ ok: true; accountId: string; accountName: string; expiresAt: Date } | { ok: false; reason: 'used' | 'expired' | 'unknown' }> {
  if (!/^[A-Za-z0-9]{16,64}$/.test(token)) return { ok: false, reason: 'unknown' };
  const row = await peekSignInToken(db, hashSecret(token));
  if (!row) return { ok: false, reason: 'unknown' };
  if (row.used_at) return { ok: false, reason: 'used' };
  const expiresAt = new Date(row.expires_at);
  if (expiresAt.getTime() <= now.getTime()) return { ok: false, reason: 'expired' };
  return { ok: true, accountId: row.account_id, accountName: row.account_name, expiresAt };
}

/** Spends a sign-in token and opens a session for its account. */
export async function signIn(db: Queryable, token: string, now: Date = new Date()): Promise<SignInResult> {
  if (!/^[A-Za-z0-9]{16,64}$/.test(token)) return { ok: false, reason: 'unknown' };
  const used = await useSignInToken(db, hashSecret(token), now);
  if (used.kind !== 'ok') return { ok: false, reason: used.kind };
  const sessionToken = newUrlToken();
  const expiresAt = new Date(now.getTime() + SESSION_TTL_MS);
  await insertSession(db, hashSecret(sessionToken), used.accountId, expiresAt, used.apiKeyId);
  return { ok: true, sessionToken, accountId: used.accountId, expiresAt };
}

/** A signed-in browser: its account, and the CSRF token its forms carry. */
export interface DashboardSession {
  accountId: string;
  accountName: string;
  csrfToken: string;
  sessionToken: string;
}

/** The session a cookie value opens, or null (none, unknown, expired or signed out). */
export async function sessionOf(db: Queryable, sessionToken: string | undefined, now: Date = new Date()): Promise<DashboardSession | null> {
  if (!sessionToken || !/^[A-Za-z0-9]{16,64}$/.test(sessionToken)) return null;
  const row = await findSession(db, hashSecret(sessionToken), now);
  if (!row) return null;
  return { accountId: row.account_id, accountName: row.account_name, csrfToken: csrfTokenOf(sessionToken), sessionToken };
}

/** The CSRF token of a session. */
export function csrfTokenOf(sessionToken: string): string {
  return createHmac('sha256', sessionToken).update('cnv dashboard csrf').digest('base64url');
}

/** Whether a submitted CSRF token is the session's (timing-safe). */
export function csrfTokenValid(session: DashboardSession, submitted: unknown): boolean {
  if (typeof submitted !== 'string') return false;
  const expected = Buffer.from(session.csrfToken);
  const given = Buffer.from(submitted);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** Signs a session out. */
export async function signOut(db: Queryable, session: DashboardSession): Promise<void> {
  await deleteSession(db, hashSecret(session.sessionToken));
}
