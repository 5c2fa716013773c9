/**
 * Bundled in place of dayjs (infra/bundling.ts). Only launder requires it, for its date and time
 * helpers; sanitize-html uses launder's `naughtyHref` alone, which never calls it. Nothing of ours
 * imports dayjs: a function that starts to must drop this alias first.
 */
export default function dayjsNotBundled(): never {
  throw new Error(
    'dayjs is not bundled (infra/bundling.ts): only launder requires it, for helpers sanitize-html never calls',
  );
}
