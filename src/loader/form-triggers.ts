/**
 * The form trigger's side of the core: the form detectors the config lists run while the loader is allowed and stop
 * otherwise; their script (`/loader-forms.js`) is fetched the first time they may run. Only the loader of sites with
 * form triggers carries this (the plain loader, and the per-site loader of such a site); the per-site loader of a site
 * without them leaves it out.
 */
import type { SiteConfig } from '../protocol/collector';
import type { LoadOptional, OptionalExports, Send } from './optional';

/** Brings the form detectors in line with whether the loader is allowed (`on`); called after every change of it. */
export type FormTriggers = (on: boolean, config: SiteConfig, send: Send) => void;

/** The form triggers of a page, fetching the detectors' script through load. */
export const formTriggers = (load: LoadOptional): FormTriggers => {
  let script: Promise<OptionalExports['forms'] | undefined> | undefined;
  return (on, config, send) => {
    if (script || (on && config.forms && config.forms[0])) {
      (script = script || load('forms')).then((run) => run && run(on, config.forms!, send));
    }
  };
};
