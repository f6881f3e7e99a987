/** The platforms' logos: copied from simple-icons unaltered (kept in step with the installed package), monograms otherwise. */
import { describe, expect, it } from 'vitest';
import * as simpleIcons from 'simple-icons';
import { PLATFORM_ICONS, PLATFORM_ICON_SLUGS, monogramOf, platformLogo } from '../../src/server/destinations/logos';
import { supportedDestinationTypes, platformFor } from '../../src/server/destinations';

const bySlug = new Map(Object.values(simpleIcons as unknown as Record<string, { slug: string; title: string; hex: string; path: string }>).map((i) => [i.slug, i]));

describe('platform logos', () => {
  it('match the installed simple-icons package exactly (path, colour, title)', () => {
    for (const [type, icon] of Object.entries(PLATFORM_ICONS)) {
      const source = bySlug.get(PLATFORM_ICON_SLUGS[type]!);
      expect(source, type).toBeDefined();
      expect(icon).toEqual({ title: source!.title, hex: source!.hex, path: source!.path });
    }
  });

  it('simple-icons still has no Microsoft or LinkedIn icon (removed for trademark reasons): those get a monogram', () => {
    expect(bySlug.has('linkedin')).toBe(false);
    expect(bySlug.has('microsoft')).toBe(false);
    expect(bySlug.has('microsoftbing')).toBe(false);
    expect(String(platformLogo('microsoft-ads', 'Microsoft Advertising'))).toContain('aria-label="Microsoft Advertising (monogram)"');
    expect(String(platformLogo('linkedin', 'LinkedIn'))).toContain('>Li</text>');
    expect(monogramOf('Microsoft Advertising')).toBe('MA');
  });

  it('every supported platform gets a labelled image', () => {
    for (const type of supportedDestinationTypes()) {
      const label = platformFor(type)!.label;
      const svg = String(platformLogo(type, label));
      expect(svg).toMatch(/^<svg [^>]*role="img" aria-label="[^"]+"/);
      expect(svg).toContain(`<title>${label}</title>`);
    }
  });
});
