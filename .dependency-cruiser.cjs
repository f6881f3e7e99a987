/**
 * The import rules of ARCHITECTURE.md, checked by `npm test` (npm run lint:deps). A feature folder of the service is a
 * step of the flow (api/<resource>, collector, webhook, pairing, fanout, delivery, destinations/<platform>, accounts)
 * or a surface or service beside it (dashboard, mcp, notifications, privacy, rate-limits, health, openapi): from
 * outside, it is reached through its index.ts only.
 */
/** Folders whose insides are private: other folders import their index.ts. */
const FEATURE = '^src/server/(api/[^/]+|collector|webhook|pairing|fanout|delivery|accounts|dashboard|mcp|notifications|privacy|rate-limits|health|openapi|destinations/[^/]+)/';

/** The composition roots: they plug each feature's routes into the app. */
const COMPOSITION = '^src/server/(app|api/routes)\\.ts$';

module.exports = {
  forbidden: [
    { name: 'no-cycles', severity: 'error', comment: 'Data flows one way: no module reaches back up.', from: {}, to: { circular: true } },
    {
      name: 'loader-stays-small',
      severity: 'error',
      comment: 'The loader bundles only its own modules, the protocol and js-cookie.',
      from: { path: '^src/(loader|loader-forms)/' },
      to: { pathNot: ['^src/(loader|loader-forms|protocol)/', 'node_modules/js-cookie'] },
    },
    {
      name: 'protocol-depends-on-nothing',
      severity: 'error',
      comment: 'src/protocol is the one definition every part shares: it imports no other part.',
      from: { path: '^src/protocol/' },
      to: { path: '^src/(?!protocol/)' },
    },
    {
      name: 'service-independent-of-demo-and-cli',
      severity: 'error',
      comment: 'The service never imports the demo or the command line.',
      from: { path: '^src/server/' },
      to: { path: '^src/(demo|cli)/' },
    },
    {
      name: 'launcher-stays-small',
      severity: 'error',
      comment: 'The launcher stays beside the running service: it imports only its own folder and Node.',
      from: { path: '^src/launch/' },
      to: { path: '^src/(?!launch/)' },
    },
    {
      name: 'client-independent-of-service',
      severity: 'error',
      comment: "Customers' backends install the client: it shares only the protocol.",
      from: { path: '^src/client/' },
      to: { path: '^src/(?!client/|protocol/)' },
    },
    {
      name: 'feature-internals-are-private',
      severity: 'error',
      comment: "Reach another feature folder through its index.ts, not into its files.",
      from: { path: FEATURE },
      to: { path: FEATURE, pathNot: ['^src/server/$1', '/index\\.ts$'] },
    },
    {
      name: 'destinations-are-reached-through-their-index',
      severity: 'error',
      comment:
        "destinations/ is a step of the flow too, but FEATURE makes only its platform folders private (each platform " +
        "reaches the shared contract and helpers beside it): from outside destinations/, import destinations/index.ts.",
      from: { path: '^src/server/', pathNot: ['^src/server/destinations/', COMPOSITION] },
      to: { path: '^src/server/destinations/[^/]+$', pathNot: '/index\\.ts$' },
    },
    {
      name: 'outside-reaches-features-through-index',
      severity: 'error',
      comment: 'Outside the feature folders, import a feature through its index.ts.',
      from: { path: '^src/server/', pathNot: [FEATURE, COMPOSITION] },
      to: { path: FEATURE, pathNot: '/index\\.ts$' },
    },
    {
      name: 'routes-are-plugged-in-by-the-composition-root',
      severity: 'error',
      comment: "A feature's routes (routes.ts, *-routes.ts) are registered by src/server/app.ts or src/server/api/routes.ts only.",
      from: { path: '^src/server/', pathNot: COMPOSITION },
      to: { path: 'routes\\.ts$', pathNot: '^src/server/$1' },
    },
    {
      name: 'sql-imports-no-logic',
      severity: 'error',
      comment: 'SQL files hold SQL: they import the database layer, other SQL, ids and protocol facts, and types.',
      from: { path: 'sql\\.ts$' },
      to: {
        pathNot: ['^src/server/db/', 'sql\\.ts$', '/index\\.ts$', '^src/protocol/', 'node_modules'],
        dependencyTypesNot: ['type-only'],
      },
    },
    {
      name: 'no-async-hooks',
      severity: 'error',
      comment:
        "On Node 20 the first AsyncLocalStorage.run (or any async hook) turns on hooks that run on every promise and tick " +
        'of the process for good (docs/benchmarks.md). Pass what a call needs instead.',
      from: { path: '^src/' },
      to: { path: '^(node:)?async_hooks$' },
    },
    {
      name: 'infrastructure-knows-no-feature',
      severity: 'error',
      comment: 'http/ and db/ serve every feature and import none (the composition root is src/server/app.ts).',
      from: { path: '^src/server/(http|db)/' },
      to: { path: FEATURE, pathNot: '^src/server/accounts/index\\.ts$' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'], extensions: ['.ts', '.js', '.mjs'] },
    exclude: { path: 'node_modules' },
  },
};
