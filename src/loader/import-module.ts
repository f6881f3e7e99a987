/**
 * The browser's module loader, which fetches the optional scripts (ES modules): `import(url)` fetches a URL once per
 * page (the module map keeps what it loaded), in CORS mode (the service answers them with
 * `Access-Control-Allow-Origin: *`), under the same CSP `script-src` that allows the loader. A module of its own so the
 * unit tests can stand in for it (happy-dom has no module loader for URLs); the browser tests use the real one.
 */
export const importModule = (url: string): Promise<{ default?: unknown }> => {
  return import(/* @vite-ignore */ url);
};
