/** Origin rules shared by the loader (is this page active?), the collector (Origin header) and the site API (domain). */

/**
 * Whether a page origin is covered by a site's domain: the same origin, or a subdomain of the domain's host,
 * with the same scheme and port. A null domain covers nothing. Uses the URL parser (lower-cased host, default port
 * dropped) so the browser bundle stays small; domains are validated as bare origins when they are saved.
 */
export const originMatchesDomain = (
  domain: string | null | undefined,
  pageOrigin: string | null | undefined,
): boolean => {
  try {
    const site = new URL(domain!);
    const page = new URL(pageOrigin!);
    return (
      /^https?:$/.test(site.protocol) &&
      site.protocol === page.protocol &&
      site.port === page.port &&
      // The same host or a subdomain of it: `www.example.com` is `example.com` with a label in front.
      ('.' + page.hostname).endsWith('.' + site.hostname)
    );
  } catch {
    // null, 'null' (opaque origins) and anything unparseable cover nothing
    return false;
  }
};
