/**
 * The parts of the code and the directions they may depend on each other, checked by
 * dependency-cruiser on every `npm test` (test/lint/dependencies.test.ts runs it; so does
 * `npm run lint:deps`). docs/architecture.md draws the same picture and says why.
 *
 * Every rule below is a forbidden direction: a new import that crosses one fails the test and
 * names the file, the import and the rule. bin/, bench/, scripts/ and test/ are free: they put
 * the parts together.
 */
const PRODUCT = '^(shared|functions|infra)/';
const DYNAMODB_SDK = '(^|/)node_modules/@aws-sdk/(client-dynamodb|lib-dynamodb|util-dynamodb)/';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment:
        'A cycle makes two modules one: neither can be read, tested or moved alone. A cycle through type-only imports ' +
        '(a command table and its commands naming one interface) loads nothing and is allowed.',
      from: {},
      to: { circular: true, viaOnly: { dependencyTypesNot: ['type-only'] } },
    },
    {
      name: 'product-not-to-emulation',
      severity: 'error',
      comment:
        'The emulators (emulation/local, emulation/rehearsal) imitate AWS around the product; the product never knows them. ' +
        'An emulator decorates what it needs from outside (e.g. decorateDbClients in shared/db/core/client.ts).',
      from: { path: PRODUCT },
      to: { path: '^emulation/' },
    },
    {
      name: 'product-not-to-tools',
      severity: 'error',
      comment: 'bin/, bench/, scripts/ and test/ use the product; the product never imports them.',
      from: { path: '^(shared|functions|infra|emulation)/' },
      to: { path: '^(bin|bench|scripts|test)/' },
    },
    {
      name: 'console-is-a-tool',
      severity: 'error',
      comment:
        'The admin console (bin/console) is a front of the admin handler, like the CLI that starts it: only bin/admin.ts ' +
        'imports it, and it reaches no emulator or infra (it talks to the handler through bin/admin-invoke.ts).',
      from: { path: '^bin/console/' },
      to: { path: '^(emulation|infra)/' },
    },
    {
      name: 'console-only-from-admin-cli',
      severity: 'error',
      comment: 'Nothing but the admin CLI starts the console.',
      from: { path: '^(?!bin/admin\\.ts$|bin/console/)' },
      to: { path: '^bin/console/' },
    },
    {
      name: 'domain-is-pure',
      severity: 'error',
      comment: 'shared/domain holds the rules and types: it imports no other part of ours and no AWS SDK.',
      from: { path: '^shared/domain/' },
      to: { path: ['^(shared/(?!domain/)|functions/|infra/|emulation/)', '(^|/)node_modules/@aws-sdk/'] },
    },
    {
      name: 'app-below-http',
      severity: 'error',
      comment:
        'shared/app (use cases) composes domain rules, repositories and the queue (the fan-out queues deliveries); ' +
        'it knows no HTTP, handler or infrastructure.',
      from: { path: '^shared/app/' },
      to: { path: '^(shared/(http|secrets)/|functions/|infra/)' },
    },
    {
      name: 'db-below-app',
      severity: 'error',
      comment: 'shared/db maps items to domain types; it knows no use case, HTTP, handler or other adapter.',
      from: { path: '^shared/db/' },
      to: { path: '^(shared/(app|http|queue|secrets)/|functions/|infra/)' },
    },
    {
      name: 'events-raised-in-app',
      severity: 'error',
      comment:
        'A use case (shared/app) decides which event a change raises, built by a pure function of shared/domain/event ' +
        '(orders: shared/domain/order/events.ts), and hands it to the repository, which commits it in the same transaction ' +
        '(shared/db/event/item.ts puts it). Storage names the event type and never builds one.',
      from: { path: '^shared/db/' },
      to: { path: '^shared/domain/(event/|order/events\\.ts$)', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'functions-not-to-db',
      severity: 'error',
      comment:
        'A handler parses, calls a use case (shared/app) and maps its outcome: storage is reached only through shared/app, ' +
        "the signer's, fan-out's and admin's included. No exception.",
      from: { path: '^functions/' },
      to: { path: '^shared/db/' },
    },
    {
      name: 'only-db-speaks-dynamodb',
      severity: 'error',
      comment: 'Only shared/db imports the DynamoDB SDK: keys, attributes and conditions stay in one place.',
      from: { path: PRODUCT, pathNot: '^shared/db/' },
      to: { path: DYNAMODB_SDK },
    },
    {
      name: 'http-not-to-db',
      severity: 'error',
      comment:
        'shared/http turns requests into use-case calls and results into responses; storage is reached through shared/app ' +
        '(idempotency records too: checking and storing them is a step of the use case, shared/app/idempotent-commit.ts). ' +
        "One stated exception (docs/architecture.md#stated-exceptions): a type-only import checks a documented schema against its record's type.",
      from: { path: '^shared/http/' },
      to: { path: '^shared/db/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'shared-not-to-functions',
      severity: 'error',
      comment:
        'Handlers use shared/, never the other way: no exception. The query and body schemas a route validates with live ' +
        'in shared/domain, so the OpenAPI builder (shared/http/openapi) documents them without loading a handler.',
      from: { path: '^shared/' },
      to: { path: '^functions/' },
    },
    {
      name: 'infra-takes-names-only',
      severity: 'error',
      comment:
        'infra/ (CDK) imports names and settings from shared/ (table and index names, key prefixes, routes, retry plan, stream filters); ' +
        'never runtime code: no handler, use case, repository, client or emulator.',
      from: { path: '^infra/' },
      to: {
        path: '^(functions/|emulation/|shared/(app|queue|secrets)/|shared/db/core/(client|helpers)\\.ts$|shared/db/.*(/|\\.)repo\\.ts$)',
      },
    },
    {
      name: 'functions-stay-apart',
      severity: 'error',
      comment:
        'One Lambda per group: a group never imports another group, so each bundle holds only its own routes. ' +
        'Stated exceptions (docs/architecture.md#stated-exceptions): functions/mcp serves every keyed operation as a tool, ' +
        "through the groups' own operation tables; the admin's test delivery (webhooks ping) is the signer's own POST.",
      from: { path: '^functions/(?!mcp/)([^/]+)/', pathNot: '^functions/admin/webhook-commands\\.ts$' },
      to: { path: '^functions/', pathNot: '^functions/$1/' },
    },
    {
      name: 'mcp-takes-operations-only',
      severity: 'error',
      comment:
        "functions/mcp reaches other groups only through their handler's operation table (route schemas live in shared/domain).",
      from: { path: '^functions/mcp/' },
      to: { path: '^functions/(?!mcp/)', pathNot: '^functions/[^/]+/handler\\.ts$' },
    },
    {
      name: 'admin-takes-ping-only',
      severity: 'error',
      comment: 'The admin reaches the webhook signer only for its test delivery.',
      from: { path: '^functions/admin/webhook-commands\\.ts$' },
      to: { path: '^functions/(?!admin/)', pathNot: '^functions/webhooks/ping\\.ts$' },
    },
    {
      name: 'adapters-stay-leaves',
      severity: 'error',
      comment:
        'shared/queue and shared/secrets wrap one AWS service each; they know no use case, repository, HTTP or handler.',
      from: { path: '^shared/(queue|secrets)/' },
      to: { path: '^(shared/(app|db|http)/|functions/|infra/)' },
    },
    {
      name: 'settings-and-log-are-leaves',
      severity: 'error',
      comment:
        'config.ts, log.ts, metrics.ts, aws-clients.ts and context.ts (the request context) are read by every part; they ' +
        'import none but each other.',
      from: { path: '^shared/(config|log|metrics|aws-clients|context)\\.ts$' },
      to: { path: '^(shared/(?!(config|log|metrics|aws-clients|context)\\.ts$)|functions/|infra/)' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(cdk\\.out|\\.data|docs)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
