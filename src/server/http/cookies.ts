/** Reading the cookies of a request, and whether the browser reached the service over HTTPS (a cookie's Secure flag). */
import type { FastifyRequest } from 'fastify';

/** The value of one cookie of a request. */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** Whether the browser reached the service over HTTPS (directly, or through the public URL a proxy serves). */
export function isHttps(request: FastifyRequest, publicUrl: string): boolean {
  return request.protocol === 'https' || publicUrl.startsWith('https:');
}
