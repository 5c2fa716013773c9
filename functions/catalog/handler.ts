import { spendWriteBudget } from '#app/write-budget.ts';
import { currentMappedProduct } from '#app/product-writes.ts';
import { currentTaxonomy } from '#app/taxonomy.ts';
import { createHttpHandler, type GroupOperations } from '#http/http-handler.ts';
import { pathExternalId, type CurrentState, type CurrentStatesOf } from '#http/dry-run.ts';
import { upsertProduct } from './routes/upsert-product.ts';
import { updateProduct } from './routes/update-product.ts';
import { upsertCategory } from './routes/upsert-category.ts';
import { upsertTag } from './routes/upsert-tag.ts';
import { upsertProductBatchRoute } from './routes/upsert-product-batch.ts';
import { getCatalogProduct } from './routes/get-product-by-external-id.ts';
import { adjustProductStock } from './routes/adjust-stock.ts';
import { listChecksums } from './routes/list-product-checksums.ts';

/** The catalog by the caller's external ids: writes (catalog:write) and the read-back of a product and the key's checksums (catalog:read). */
export const operations = {
  getCatalogProduct,
  listChecksums,
  upsertProduct,
  updateProduct,
  upsertProducts: upsertProductBatchRoute,
  upsertCategory,
  upsertTag,
  adjustProductStock,
} satisfies GroupOperations<'catalog'>;

/** The product at the path's external id as the caller sees it (PUT and PATCH address the same one). */
const currentProductAtPath: CurrentState = (ctx, i) =>
  currentMappedProduct(ctx, i.principal, pathExternalId(i), i.query.include === 'offers');

/** What each write addresses as stored now, for its dry run (the batch reads each item with upsertProduct's). */
export const currentStates = {
  upsertProduct: currentProductAtPath,
  updateProduct: currentProductAtPath,
  upsertCategory: (ctx, i) => currentTaxonomy(ctx, 'category', i.principal, pathExternalId(i)),
  upsertTag: (ctx, i) => currentTaxonomy(ctx, 'tag', i.principal, pathExternalId(i)),
  // A stock delta answers the product with its offers.
  adjustProductStock: (ctx, i) => currentMappedProduct(ctx, i.principal, pathExternalId(i), true),
} satisfies CurrentStatesOf<'catalog'>;

// Pure: the MCP server imports this module for its operations only, and its bundle leaves out this Lambda.
export const handler = /* @__PURE__ */ createHttpHandler('catalog', operations, { spendWriteBudget, currentStates });
