/** Entry of dist/loader.js: boots the loader, and nothing it does may throw into the host page. */
import { boot } from './boot';
import { guard } from './guard';

guard(boot)();
