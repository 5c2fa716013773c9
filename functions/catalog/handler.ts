import { spendWriteBudget } from '#app/write-budget.ts';
import { createHttpHandler, type GroupOperations } from '#http/http-handler.ts';
import { upsertProduct } from './routes/upsert-product.ts';
import { updateProduct } from './routes/update-product.ts';
import { upsertCategory } from './routes/upsert-category.ts';
import { upsertTag } from './routes/upsert-tag.ts';
import { upsertProductBatchRoute } from './routes/upsert-product-batch.ts';
import { getCatalogProduct } from './routes/get-product-by-external-id.ts';

/** The catalog by the caller's external ids: writes (catalog:write) and the read-back of a product (catalog:read). */
export const operations = {
  getCatalogProduct,
  upsertProduct,
  updateProduct,
  upsertProducts: upsertProductBatchRoute,
  upsertCategory,
  upsertTag,
} satisfies GroupOperations<'catalog'>;

export const handler = createHttpHandler('catalog', operations, { spendWriteBudget });
