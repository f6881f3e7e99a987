/**
 * Entry of dist/loader-forms.js, an ES module the core imports (see src/loader/optional.ts): its default export runs
 * the form detectors, guarded so an error in them never reaches the core or the page.
 */
import { guard } from '../loader/guard';
import type { OptionalExports } from '../loader/optional';
import { formsRunner } from './submissions';

const forms: OptionalExports['forms'] = guard(formsRunner());
export default forms;
