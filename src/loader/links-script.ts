/**
 * Entry of dist/loader-links.js, an ES module the core imports (see optional.ts): its default export starts the linker
 * and URL passthrough, guarded so an error in it never reaches the core or the page.
 */
import { guard } from './guard';
import { startLinks } from './links';
import type { OptionalExports } from './optional';

const links: OptionalExports['links'] = guard(startLinks);
export default links;
