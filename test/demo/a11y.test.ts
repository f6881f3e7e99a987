/** The demo pages as assistive technology reads them: titles, headings, the current page, landmarks, form errors. */
import { describe, expect, it } from 'vitest';
import { STYLESHEET } from '../../src/demo/assets/style';
import { colourOf, contrastRatio } from '../support/contrast';

describe('the demo style', () => {
  it('draws the edge of the signup fields, and their focus ring, at 3:1 or more against the white they sit on', () => {
    expect(contrastRatio(colourOf(STYLESHEET, 'form.stack input', 'border'), '#ffffff')).toBeGreaterThanOrEqual(3);
    expect(contrastRatio(colourOf(STYLESHEET, 'form.stack input:focus', 'outline'), '#ffffff')).toBeGreaterThanOrEqual(3);
  });
});
