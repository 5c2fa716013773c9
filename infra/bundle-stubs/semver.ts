/**
 * Bundled in place of semver (infra/bundling.ts): its `gte` alone. Only the signer bundles semver:
 * its X-Ray SDK loads a patcher for the AWS SDK v2 (which we never use), and that patcher requires
 * semver for one `semver.gte` call. The whole package (~20 KB of bundle, every range, class and
 * function built as it loads) cost the signer ~7 ms of its cold start. test/infra/bundles.test.ts
 * fails if a bundled module that requires semver uses anything else of it.
 */
// A path, not `semver/functions/gte.js`: the alias of `semver` would rewrite that one too.
// @ts-expect-error semver ships no types, and this file is only ever bundled (the bundle test runs it).
export { default as gte } from '../../node_modules/semver/functions/gte.js';
