/** What a browser sends back of a response's Set-Cookie headers: `name=value` pairs for a Cookie header (none removed). */
export function cookieHeaderFrom(setCookie: string | string[] | number | null | undefined): string {
  const lines = Array.isArray(setCookie) ? setCookie : typeof setCookie === 'string' ? [setCookie] : [];
  return lines
    .filter((line) => !/;\s*max-age=0\b/i.test(line))
    .map((line) => line.split(';')[0]!.trim())
    .join('; ');
}
