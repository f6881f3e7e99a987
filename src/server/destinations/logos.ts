/**
 * Each ad platform's logo, for the hosted connect pages and the dashboard, inlined as SVG (no third-party host).
 *
 * Source: the npm package `simple-icons` 16.37.0 (CC0-1.0; https://simpleicons.org), copied here so the service does not
 * load the whole icon set at start. test/server/platform-logos.test.ts checks these paths against the installed
 * package, so an update of the package that changes an icon fails until this file is brought up to date.
 * Simple Icons' disclaimer asks users to follow each brand's guidelines: the logos are shown unaltered, in the brand's
 * colour, only beside the platform's name, to say which platform a page connects (nominative use).
 *
 * Microsoft Advertising and LinkedIn have no icon: Simple Icons removed every Microsoft brand (LinkedIn included) at
 * Microsoft's request (simple-icons issue #11236, PR #10019; LinkedIn: issue #11372, removed in v14.0.0), and
 * Microsoft's trademark terms forbid using its logos without permission. Those platforms (and any platform without an
 * entry) get a neutral monogram: their initials in a grey tile, labelled with the platform's name, not an imitation
 * of the brand.
 */
import { html, type Html } from '../http/html';

interface BrandIcon {
  /** The brand's name as Simple Icons spells it. */
  title: string;
  /** The brand colour, hex without '#'. */
  hex: string;
  /** The icon's SVG path on a 24×24 view box. */
  path: string;
}

/** Simple Icons' icons by destination type. */
export const PLATFORM_ICONS: Readonly<Record<string, BrandIcon>> = {
  "google-ads": { title: 'Google Ads', hex: '4285F4', path: 'M3.9998 22.9291C1.7908 22.9291 0 21.1383 0 18.9293s1.7908-3.9998 3.9998-3.9998 3.9998 1.7908 3.9998 3.9998-1.7908 3.9998-3.9998 3.9998zm19.4643-6.0004L15.4632 3.072C14.3586 1.1587 11.9121.5028 9.9988 1.6074S7.4295 5.1585 8.5341 7.0718l8.0009 13.8567c1.1046 1.9133 3.5511 2.5679 5.4644 1.4646 1.9134-1.1046 2.568-3.5511 1.4647-5.4644zM7.5137 4.8438L1.5645 15.1484A4.5 4.5 0 0 1 4 14.4297c2.5597-.0075 4.6248 2.1585 4.4941 4.7148l3.2168-5.5723-3.6094-6.25c-.4499-.7793-.6322-1.6394-.5878-2.4784z' },
  "meta": { title: 'Meta', hex: '0467DF', path: 'M6.915 4.03c-1.968 0-3.683 1.28-4.871 3.113C.704 9.208 0 11.883 0 14.449c0 .706.07 1.369.21 1.973a6.624 6.624 0 0 0 .265.86 5.297 5.297 0 0 0 .371.761c.696 1.159 1.818 1.927 3.593 1.927 1.497 0 2.633-.671 3.965-2.444.76-1.012 1.144-1.626 2.663-4.32l.756-1.339.186-.325c.061.1.121.196.183.3l2.152 3.595c.724 1.21 1.665 2.556 2.47 3.314 1.046.987 1.992 1.22 3.06 1.22 1.075 0 1.876-.355 2.455-.843a3.743 3.743 0 0 0 .81-.973c.542-.939.861-2.127.861-3.745 0-2.72-.681-5.357-2.084-7.45-1.282-1.912-2.957-2.93-4.716-2.93-1.047 0-2.088.467-3.053 1.308-.652.57-1.257 1.29-1.82 2.05-.69-.875-1.335-1.547-1.958-2.056-1.182-.966-2.315-1.303-3.454-1.303zm10.16 2.053c1.147 0 2.188.758 2.992 1.999 1.132 1.748 1.647 4.195 1.647 6.4 0 1.548-.368 2.9-1.839 2.9-.58 0-1.027-.23-1.664-1.004-.496-.601-1.343-1.878-2.832-4.358l-.617-1.028a44.908 44.908 0 0 0-1.255-1.98c.07-.109.141-.224.211-.327 1.12-1.667 2.118-2.602 3.358-2.602zm-10.201.553c1.265 0 2.058.791 2.675 1.446.307.327.737.871 1.234 1.579l-1.02 1.566c-.757 1.163-1.882 3.017-2.837 4.338-1.191 1.649-1.81 1.817-2.486 1.817-.524 0-1.038-.237-1.383-.794-.263-.426-.464-1.13-.464-2.046 0-2.221.63-4.535 1.66-6.088.454-.687.964-1.226 1.533-1.533a2.264 2.264 0 0 1 1.088-.285z' },
  "reddit": { title: 'Reddit', hex: 'FF4500', path: 'M12 0C5.373 0 0 5.373 0 12c0 3.314 1.343 6.314 3.515 8.485l-2.286 2.286C.775 23.225 1.097 24 1.738 24H12c6.627 0 12-5.373 12-12S18.627 0 12 0Zm4.388 3.199c1.104 0 1.999.895 1.999 1.999 0 1.105-.895 2-1.999 2-.946 0-1.739-.657-1.947-1.539v.002c-1.147.162-2.032 1.15-2.032 2.341v.007c1.776.067 3.4.567 4.686 1.363.473-.363 1.064-.58 1.707-.58 1.547 0 2.802 1.254 2.802 2.802 0 1.117-.655 2.081-1.601 2.531-.088 3.256-3.637 5.876-7.997 5.876-4.361 0-7.905-2.617-7.998-5.87-.954-.447-1.614-1.415-1.614-2.538 0-1.548 1.255-2.802 2.803-2.802.645 0 1.239.218 1.712.585 1.275-.79 2.881-1.291 4.64-1.365v-.01c0-1.663 1.263-3.034 2.88-3.207.188-.911.993-1.595 1.959-1.595Zm-8.085 8.376c-.784 0-1.459.78-1.506 1.797-.047 1.016.64 1.429 1.426 1.429.786 0 1.371-.369 1.418-1.385.047-1.017-.553-1.841-1.338-1.841Zm7.406 0c-.786 0-1.385.824-1.338 1.841.047 1.017.634 1.385 1.418 1.385.785 0 1.473-.413 1.426-1.429-.046-1.017-.721-1.797-1.506-1.797Zm-3.703 4.013c-.974 0-1.907.048-2.77.135-.147.015-.241.168-.183.305.483 1.154 1.622 1.964 2.953 1.964 1.33 0 2.47-.81 2.953-1.964.057-.137-.037-.29-.184-.305-.863-.087-1.795-.135-2.769-.135Z' },
  "tiktok": { title: 'TikTok', hex: '000000', path: 'M12.525.02c1.31-.02 2.61-.01 3.91-.02.08 1.53.63 3.09 1.75 4.17 1.12 1.11 2.7 1.62 4.24 1.79v4.03c-1.44-.05-2.89-.35-4.2-.97-.57-.26-1.1-.59-1.62-.93-.01 2.92.01 5.84-.02 8.75-.08 1.4-.54 2.79-1.35 3.94-1.31 1.92-3.58 3.17-5.91 3.21-1.43.08-2.86-.31-4.08-1.03-2.02-1.19-3.44-3.37-3.65-5.71-.02-.5-.03-1-.01-1.49.18-1.9 1.12-3.72 2.58-4.96 1.66-1.44 3.98-2.13 6.15-1.72.02 1.48-.04 2.96-.04 4.44-.99-.32-2.15-.23-3.02.37-.63.41-1.11 1.04-1.36 1.75-.21.51-.15 1.07-.14 1.61.24 1.64 1.82 3.02 3.5 2.87 1.12-.01 2.19-.66 2.77-1.61.19-.33.4-.67.41-1.06.1-1.79.06-3.57.07-5.36.01-4.03-.01-8.05.02-12.07z' },
};

/** The Simple Icons slug each icon above was copied from (for the test that keeps them in step with the package). */
export const PLATFORM_ICON_SLUGS: Readonly<Record<string, string>> = { 'google-ads': 'googleads', meta: 'meta', reddit: 'reddit', tiktok: 'tiktok' };

/** The initials of a platform's name for its monogram: "Microsoft Advertising" → "MA", "LinkedIn" → "Li". */
export function monogramOf(label: string): string {
  const words = label.split(/\s+/).filter((w) => /^[A-Za-z0-9]/.test(w));
  if (words.length >= 2) return (words[0]![0]! + words[1]![0]!).toUpperCase();
  const word = words[0] ?? '?';
  return word.length > 1 ? word[0]!.toUpperCase() + word[1]!.toLowerCase() : word.toUpperCase();
}

/**
 * A platform's logo as inline SVG of `size` pixels, with the platform's name as its accessible name. Without an icon:
 * a monogram tile (dark grey on light grey, contrast above 7:1).
 */
export function platformLogo(type: string, label: string, size = 40): Html {
  const icon = PLATFORM_ICONS[type];
  if (!icon) {
    const letters = monogramOf(label);
    return html`<svg class="logo monogram" width="${size}" height="${size}" viewBox="0 0 24 24" role="img" aria-label="${label} (monogram)"><title>${label}</title><rect width="24" height="24" rx="5" fill="#e9ecf1"/><text x="12" y="16" text-anchor="middle" font-family="system-ui, sans-serif" font-size="${letters.length > 1 ? 10 : 12}" font-weight="700" fill="#344054">${letters}</text></svg>`;
  }
  return html`<svg class="logo" width="${size}" height="${size}" viewBox="0 0 24 24" role="img" aria-label="${label} logo"><title>${label}</title><path fill="#${icon.hex}" d="${icon.path}"/></svg>`;
}
