/**
 * Bundled in place of postcss (infra/bundling.ts). sanitize-html calls postcss only to filter the
 * declarations of an allowed `style` attribute (`parseStyleAttributes: true` with `allowedStyles`);
 * the page policy allows no style attribute and turns style parsing off, so this never runs.
 */
export function parse(): never {
  throw new Error('postcss is not bundled: the page policy allows no style attribute (shared/domain/page/sanitize.ts)');
}
