/** Entry of dist/loader-links.js: hands the linker and URL passthrough to the core loader (see optional.ts). */
import { startLinks } from './links';
import { handOver } from './optional';

handOver('links', startLinks);
