/** Colour contrast as WCAG 2 defines it, and the colours a stylesheet gives a rule, for tests of the pages' styles. */

function luminance(hex: string): number {
  const [r, g, b] = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16) / 255).map((v) => (v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4));
  return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
}

/** The contrast ratio of two #rrggbb colours (1 to 21). */
export function contrastRatio(a: string, b: string): number {
  const [light, dark] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (light! + 0.05) / (dark! + 0.05);
}

/** The declarations of the first rule whose selector list contains `selector`, in `css`. */
export function declarationsOf(css: string, selector: string): string {
  for (const match of css.matchAll(/([^{}]+)\{([^{}]*)\}/g)) {
    if (match[1]!.split(',').some((s) => s.trim() === selector)) return match[2]!;
  }
  throw new Error(`no rule for ${selector}`);
}

/** The #rrggbb colour a declaration value names, with var(--x) read from the stylesheet's custom properties. */
export function colourIn(css: string, value: string): string {
  const variable = /var\((--[\w-]+)\)/.exec(value);
  if (variable) return colourIn(css, new RegExp(`${variable[1]}:\\s*([^;]+);`).exec(css)![1]!);
  return /#[0-9a-f]{6}\b/i.exec(value)![0];
}

/** The colour of `property` (border, outline…) in the first rule for `selector`. */
export function colourOf(css: string, selector: string, property: string): string {
  const value = new RegExp(`(?:^|;)\\s*${property}:\\s*([^;]+)`).exec(declarationsOf(css, selector))![1]!;
  return colourIn(css, value);
}
