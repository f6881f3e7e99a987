/** Entry of dist/loader-forms.js: hands the form detectors to the core loader through window.__service (see src/loader/optional.ts). */
import { handOver } from '../loader/optional';
import { formsRunner } from './submissions';

handOver('forms', formsRunner());
